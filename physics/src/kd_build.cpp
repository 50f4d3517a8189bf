// The loose kD build. Triangles are copied once into compact records (bounds, doubled midpoints, id) that the build
// permutes in place, so every pass is a linear scan over contiguous memory: per node one pass partitions (the median
// fallback uses nth_element) and one computes both children's bounds and midpoint sums, which become the children's
// own (no pass recomputes them).
#include "vtp/physics/kd_build.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace vtp::physics {

namespace {

struct Item {
  std::int16_t min[3], max[3];
  std::int16_t mid2[3];  // min + max: twice the midpoint, exact
  std::uint16_t id;
};
static_assert(sizeof(Item) == 20);  // boundsOf loads bytes 0-15 and 12-19

// A range's content bounds and the sums of its doubled midpoints (the next split's mean needs them).
struct Bounds {
  int min[3], max[3];
  long long mid2_sum[3];
};

// Bounds of a range of items (at least one): int16 min and max over the first 16 bytes of each record (lanes 0-2
// are its minimum, 3-5 its maximum, the other lanes are ignored) and int32 sums of the three doubled midpoints (the
// record's bytes 12-19, widened; a chunk's sums stay far below 2^31).
Bounds boundsOf(const Item* first, const Item* last) {
  __m128i lo = _mm_set1_epi16(std::numeric_limits<std::int16_t>::max());
  __m128i hi = _mm_set1_epi16(std::numeric_limits<std::int16_t>::min());
  __m128i sum = _mm_setzero_si128();
  for (const Item* it = first; it != last; ++it) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(it));
    lo = _mm_min_epi16(lo, v);
    hi = _mm_max_epi16(hi, v);
    sum = _mm_add_epi32(sum, _mm_cvtepi16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(it->mid2))));
  }
  alignas(16) std::int16_t l[8], h[8];
  alignas(16) std::int32_t m[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(l), lo);
  _mm_store_si128(reinterpret_cast<__m128i*>(h), hi);
  _mm_store_si128(reinterpret_cast<__m128i*>(m), sum);
  return {{l[0], l[1], l[2]}, {h[3], h[4], h[5]}, {m[0], m[1], m[2]}};
}

}  // namespace

void buildKd(std::span<const TriangleBounds> bounds, KdBuildOptions options, KdBuild& out) {
  const int leaf_triangles = std::clamp(options.leaf_triangles, 1, 64);
  const int max_depth = std::clamp(options.max_depth, 0, 64);
  const int n = int(std::min<std::size_t>(bounds.size(), 65535));
  thread_local std::vector<Item> items;
  items.resize(std::size_t(n));
  for (int i = 0; i < n; ++i) {
    Item& it = items[std::size_t(i)];
    const TriangleBounds& b = bounds[std::size_t(i)];
    std::memcpy(it.min, b.min.data(), sizeof it.min);
    std::memcpy(it.max, b.max.data(), sizeof it.max);
    for (int a = 0; a < 3; ++a) it.mid2[a] = std::int16_t(it.min[a] + it.max[a]);
    it.id = std::uint16_t(i);
  }
  static_assert(sizeof(TriangleBounds) == 12);
  out.leaves.clear();
  out.nodes.clear();

  struct Task {
    int first, last, depth, node;
    Bounds bounds;
  };
  thread_local std::vector<Task> stack;  // depth-bounded
  stack.clear();
  out.nodes.push_back({});
  stack.push_back({0, n, 0, 0, boundsOf(items.data(), items.data() + n)});
  while (!stack.empty()) {
    const Task task = stack.back();
    stack.pop_back();
    const int count = task.last - task.first;
    if (count <= leaf_triangles || task.depth >= max_depth) {
      out.nodes[std::size_t(task.node)].leaf = int(out.leaves.size());
      const Bounds& b = task.bounds;
      out.leaves.push_back({task.first, count, {std::int16_t(b.min[0]), std::int16_t(b.min[1]), std::int16_t(b.min[2])},
                            {std::int16_t(b.max[0]), std::int16_t(b.max[1]), std::int16_t(b.max[2])}});
      continue;
    }
    int axis = 0;
    for (int a = 1; a < 3; ++a) {
      if (task.bounds.max[a] - task.bounds.min[a] > task.bounds.max[axis] - task.bounds.min[axis]) axis = a;
    }
    Item* first = items.data() + task.first;
    Item* last = items.data() + task.last;
    const long long sum = task.bounds.mid2_sum[axis];
    // Mean midpoint, rounded up: a triangle goes left when its midpoint is strictly below it.
    const long long mean = (long long)std::ceil(double(sum) / count);  // exact: |sum| < 2^31
    Item* split = std::partition(first, last, [&](const Item& it) { return it.mid2[axis] < mean; });
    const int left_count = int(split - first);
    if (4 * left_count < count || 4 * (count - left_count) < count) {
      split = first + count / 2;
      std::nth_element(first, split, last, [&](const Item& a, const Item& b) {
        return a.mid2[axis] != b.mid2[axis] ? a.mid2[axis] < b.mid2[axis] : a.id < b.id;
      });
    }
    const int mid = int(split - items.data());
    const Bounds left_bounds = boundsOf(first, split), right_bounds = boundsOf(split, last);
    const int left = int(out.nodes.size()), right = left + 1;
    KdNode& node = out.nodes[std::size_t(task.node)];
    node.axis = axis;
    node.left_max = left_bounds.max[axis];
    node.right_min = right_bounds.min[axis];
    node.left = left;
    node.right = right;
    out.nodes.push_back({});
    out.nodes.push_back({});
    stack.push_back({mid, task.last, task.depth + 1, right, right_bounds});
    stack.push_back({task.first, mid, task.depth + 1, left, left_bounds});
  }
  out.order.resize(std::size_t(n));
  for (int i = 0; i < n; ++i) out.order[std::size_t(i)] = items[std::size_t(i)].id;
}

int kdDepth(const KdBuild& build) {
  if (build.nodes.empty()) return 0;
  int deepest = 0;
  std::vector<std::pair<int, int>> stack{{0, 0}};  // node, depth
  while (!stack.empty()) {
    const auto [node, depth] = stack.back();
    stack.pop_back();
    const KdNode& n = build.nodes[std::size_t(node)];
    if (n.axis < 0) {
      deepest = std::max(deepest, depth);
    } else {
      stack.push_back({n.left, depth + 1});
      stack.push_back({n.right, depth + 1});
    }
  }
  return deepest;
}

}  // namespace vtp::physics
