#include "vtp/physics/kd_build.h"

#include <algorithm>

namespace vtp::physics {

void buildKd(std::span<const TriangleBounds> bounds, KdBuildOptions options, KdBuild& out) {
  const int leaf_triangles = std::clamp(options.leaf_triangles, 1, 64);
  const int max_depth = std::clamp(options.max_depth, 0, 64);
  const int n = int(std::min<std::size_t>(bounds.size(), 65535));
  out.order.resize(std::size_t(n));
  for (int i = 0; i < n; ++i) out.order[std::size_t(i)] = std::uint16_t(i);
  out.leaves.clear();
  out.nodes.clear();
  // Twice the midpoint along an axis (exact in integers).
  auto mid2 = [&](std::uint16_t t, int axis) { return int(bounds[t].min[axis]) + int(bounds[t].max[axis]); };
  // The content bounds of a range along one axis.
  auto extent = [&](int first, int last, int axis, int& lo, int& hi) {
    lo = 1 << 30;
    hi = -(1 << 30);
    for (int i = first; i < last; ++i) {
      const TriangleBounds& b = bounds[out.order[std::size_t(i)]];
      lo = std::min(lo, int(b.min[axis]));
      hi = std::max(hi, int(b.max[axis]));
    }
  };

  struct Task {
    int first, last, depth, node;
  };
  std::vector<Task> stack;  // depth-bounded: at most max_depth + 1 entries
  out.nodes.push_back({});
  stack.push_back({0, n, 0, 0});
  while (!stack.empty()) {
    const Task task = stack.back();
    stack.pop_back();
    const int count = task.last - task.first;
    if (count <= leaf_triangles || task.depth >= max_depth) {
      out.nodes[std::size_t(task.node)].leaf = int(out.leaves.size());
      out.leaves.push_back({task.first, count});
      continue;
    }
    int axis = 0, best = -1;
    for (int a = 0; a < 3; ++a) {
      int lo, hi;
      extent(task.first, task.last, a, lo, hi);
      if (hi - lo > best) best = hi - lo, axis = a;
    }
    auto first = out.order.begin() + task.first, last = out.order.begin() + task.last;
    long long sum = 0;
    for (auto it = first; it != last; ++it) sum += mid2(*it, axis);
    // Mean midpoint, rounded up: a triangle goes left when its midpoint is strictly below it.
    const long long mean = (sum + count - 1) / count;
    auto split = std::partition(first, last, [&](std::uint16_t t) { return mid2(t, axis) < mean; });
    const int left_count = int(split - first);
    if (4 * left_count < count || 4 * (count - left_count) < count) {
      split = first + count / 2;
      std::nth_element(first, split, last, [&](std::uint16_t a, std::uint16_t b) {
        return mid2(a, axis) != mid2(b, axis) ? mid2(a, axis) < mid2(b, axis) : a < b;
      });
    }
    const int mid = int(split - out.order.begin());
    int left_lo, left_hi, right_lo, right_hi;
    extent(task.first, mid, axis, left_lo, left_hi);
    extent(mid, task.last, axis, right_lo, right_hi);
    const int left = int(out.nodes.size()), right = left + 1;
    KdNode& node = out.nodes[std::size_t(task.node)];
    node.axis = axis;
    node.left_max = left_hi;
    node.right_min = right_lo;
    node.left = left;
    node.right = right;
    out.nodes.push_back({});
    out.nodes.push_back({});
    stack.push_back({mid, task.last, task.depth + 1, right});
    stack.push_back({task.first, mid, task.depth + 1, left});
  }
}

}  // namespace vtp::physics
