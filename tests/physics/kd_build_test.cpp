// The loose kD build against a plain reference of its rule (kd_build.h): recursive, one record per triangle, the
// children by std::partition on the midpoint against the mean, the median by nth_element on (midpoint, id). The build
// must give the same tree: the same nodes (axes, planes, children), the same leaves (ranges and boxes) with the same
// triangles in each, in any order inside a leaf. Random bounds, the mesher's on random worlds, and adversarial sets:
// none, one, all midpoints equal (the median every time), int16 extremes, depth 0, one triangle a leaf.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "support/random_world.h"
#include "vtp/mesher/surface_mesher.h"
#include "vtp/physics/kd_build.h"

using namespace vtp::physics;

namespace {

struct Record {
  TriangleBounds b;
  int id;
  std::int16_t mid2(int axis) const { return std::int16_t(b.min[std::size_t(axis)] + b.max[std::size_t(axis)]); }
};

struct Reference {
  KdBuildOptions options;
  std::vector<Record> records;
  KdBuild out;

  void node(int index, int first, int last, int depth) {
    std::array<int, 3> lo{}, hi{};
    long long sum[3] = {0, 0, 0};
    lo.fill(std::numeric_limits<std::int16_t>::max());
    hi.fill(std::numeric_limits<std::int16_t>::min());
    for (int i = first; i < last; ++i)
      for (int a = 0; a < 3; ++a) {
        lo[std::size_t(a)] = std::min<int>(lo[std::size_t(a)], records[std::size_t(i)].b.min[std::size_t(a)]);
        hi[std::size_t(a)] = std::max<int>(hi[std::size_t(a)], records[std::size_t(i)].b.max[std::size_t(a)]);
        sum[a] += records[std::size_t(i)].mid2(a);
      }
    const int count = last - first;
    if (count <= options.leaf_triangles || depth >= options.max_depth) {
      out.nodes[std::size_t(index)].leaf = int(out.leaves.size());
      out.leaves.push_back({first, count, {std::int16_t(lo[0]), std::int16_t(lo[1]), std::int16_t(lo[2])},
                            {std::int16_t(hi[0]), std::int16_t(hi[1]), std::int16_t(hi[2])}});
      for (int i = first; i < last; ++i) out.order[std::size_t(i)] = std::uint16_t(records[std::size_t(i)].id);
      return;
    }
    int axis = 0;
    for (int a = 1; a < 3; ++a)
      if (hi[std::size_t(a)] - lo[std::size_t(a)] > hi[std::size_t(axis)] - lo[std::size_t(axis)]) axis = a;
    const long long mean = (long long)std::ceil(double(sum[axis]) / count);
    auto begin = records.begin() + first, end = records.begin() + last;
    auto split = std::partition(begin, end, [&](const Record& r) { return r.mid2(axis) < mean; });
    const int left = int(split - begin);
    if (4 * left < count || 4 * (count - left) < count) {
      split = begin + count / 2;
      std::nth_element(begin, split, end, [&](const Record& x, const Record& y) {
        return x.mid2(axis) != y.mid2(axis) ? x.mid2(axis) < y.mid2(axis) : x.id < y.id;
      });
    }
    const int mid = int(split - records.begin());
    int left_max = std::numeric_limits<int>::min(), right_min = std::numeric_limits<int>::max();
    for (int i = first; i < last; ++i) {
      const TriangleBounds& b = records[std::size_t(i)].b;
      if (i < mid) left_max = std::max<int>(left_max, b.max[std::size_t(axis)]);
      else right_min = std::min<int>(right_min, b.min[std::size_t(axis)]);
    }
    const int l = int(out.nodes.size());
    out.nodes.push_back({});
    out.nodes.push_back({});
    KdNode& n = out.nodes[std::size_t(index)];
    n.axis = axis;
    n.left_max = left_max;
    n.right_min = right_min;
    n.left = l;
    n.right = l + 1;
    node(l, first, mid, depth + 1);
    node(l + 1, mid, last, depth + 1);
  }
};

// Leaves are numbered depth first, left before right, as the reference numbers them; nodes likewise (children when
// their parent splits).
KdBuild reference(const std::vector<TriangleBounds>& bounds, KdBuildOptions options) {
  Reference r{options, {}, {}};
  for (std::size_t i = 0; i < bounds.size(); ++i) r.records.push_back({bounds[i], int(i)});
  r.out.order.resize(bounds.size());
  r.out.nodes.push_back({});
  r.node(0, 0, int(bounds.size()), 0);
  return r.out;
}

void checkSame(const std::vector<TriangleBounds>& bounds, KdBuildOptions options) {
  KdBuild got;
  buildKd(bounds, options, got);
  const KdBuild want = reference(bounds, options);
  REQUIRE(got.order.size() == bounds.size());
  REQUIRE(got.nodes.size() == want.nodes.size());
  REQUIRE(got.leaves.size() == want.leaves.size());
  for (std::size_t i = 0; i < want.nodes.size(); ++i) {
    INFO("node " << i);
    CHECK(got.nodes[i].axis == want.nodes[i].axis);
    CHECK(got.nodes[i].left_max == want.nodes[i].left_max);
    CHECK(got.nodes[i].right_min == want.nodes[i].right_min);
    CHECK(got.nodes[i].left == want.nodes[i].left);
    CHECK(got.nodes[i].right == want.nodes[i].right);
    CHECK(got.nodes[i].leaf == want.nodes[i].leaf);
  }
  for (std::size_t i = 0; i < want.leaves.size(); ++i) {
    INFO("leaf " << i);
    const KdLeaf &g = got.leaves[i], &w = want.leaves[i];
    REQUIRE(g.first == w.first);
    REQUIRE(g.count == w.count);
    CHECK(g.min == w.min);
    CHECK(g.max == w.max);
    std::vector<int> a(got.order.begin() + g.first, got.order.begin() + g.first + g.count);
    std::vector<int> b(want.order.begin() + w.first, want.order.begin() + w.first + w.count);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    CHECK(a == b);
  }
}

std::vector<TriangleBounds> randomBounds(std::mt19937_64& rng, int n, int lo, int hi, int size) {
  std::uniform_int_distribution<int> at(lo, hi), extent(0, size);
  std::vector<TriangleBounds> out(static_cast<std::size_t>(n));
  for (TriangleBounds& b : out)
    for (std::size_t a = 0; a < 3; ++a) {
      b.min[a] = std::int16_t(at(rng));
      b.max[a] = std::int16_t(std::min(hi, b.min[a] + extent(rng)));
    }
  return out;
}

}  // namespace

TEST_CASE("kD build: the same tree as the reference on random bounds, every leaf size and depth") {
  std::mt19937_64 rng(42);
  for (const int n : {1, 2, 7, 8, 9, 15, 16, 17, 63, 100, 257, 1000, 6000}) {
    for (const KdBuildOptions options : {KdBuildOptions{8, 32}, KdBuildOptions{2, 32}, KdBuildOptions{1, 3},
                                         KdBuildOptions{24, 32}, KdBuildOptions{8, 0}}) {
      INFO("n " << n << " leaf " << options.leaf_triangles << " depth " << options.max_depth);
      checkSame(randomBounds(rng, n, -1535, 9727, 2048), options);
    }
  }
}

TEST_CASE("kD build: adversarial sets") {
  std::mt19937_64 rng(7);
  checkSame({}, {});  // no triangle: a root leaf with an empty range
  // All midpoints equal on every axis: the mean sends everything right, so the median splits every node.
  std::vector<TriangleBounds> same(300);
  for (TriangleBounds& b : same) b = {{{100, 200, 300}}, {{104, 204, 304}}};
  checkSame(same, {});
  // Equal midpoints with different extents, and int16 extremes (midpoints wrap as int16, in both builds).
  std::vector<TriangleBounds> wide = randomBounds(rng, 500, -32768, 32767, 65535);
  checkSame(wide, {});
  std::vector<TriangleBounds> nested(200);
  for (int i = 0; i < 200; ++i) {
    const auto d = std::int16_t(i);
    nested[std::size_t(i)] = {{{std::int16_t(-d), std::int16_t(-d), std::int16_t(-d)}}, {{d, d, d}}};
  }
  checkSame(nested, {});
  checkSame(randomBounds(rng, 65535, -1535, 9727, 64), {});  // the most triangles a build takes
}

TEST_CASE("kD build: the same tree as the reference on the mesher's chunks") {
  auto world = vtp::test::makeWorld();
  std::mt19937_64 rng(11);
  vtp::test::randomEdits(*world, {{-14, -10, -14}, {10, 10, 10}}, 25, rng);
  vtp::mesher::SurfaceMesher mesher;
  vtp::mesher::ChunkMesh mesh;
  std::vector<vtp::terrain::Voxel> box(std::size_t(vtp::mesher::boxVolume(vtp::mesher::kWideApron)));
  int chunks = 0;
  for (const vtp::terrain::ChunkCoord c : vtp::test::chunksNearStored(*world)) {
    const vtp::terrain::VoxelCoord o = vtp::terrain::chunkOrigin(c);
    REQUIRE(world->readBox({{o.x - 2, o.y - 2, o.z - 2}, {o.x + 10, o.y + 10, o.z + 10}}, box).ok());
    REQUIRE(mesher.mesh(box, vtp::mesher::kWideApron, mesh).ok());
    std::vector<TriangleBounds> bounds(std::size_t(mesh.triangle_count));
    for (int t = 0; t < mesh.triangle_count; ++t) {
      const auto& v0 = mesh.vertices[mesh.indices[3 * std::size_t(t)]];
      const auto& v1 = mesh.vertices[mesh.indices[3 * std::size_t(t) + 1]];
      const auto& v2 = mesh.vertices[mesh.indices[3 * std::size_t(t) + 2]];
      TriangleBounds& b = bounds[std::size_t(t)];
      b.min = {std::min({v0.x, v1.x, v2.x}), std::min({v0.y, v1.y, v2.y}), std::min({v0.z, v1.z, v2.z})};
      b.max = {std::max({v0.x, v1.x, v2.x}), std::max({v0.y, v1.y, v2.y}), std::max({v0.z, v1.z, v2.z})};
    }
    checkSame(bounds, {});
    chunks += mesh.triangle_count > 0;
  }
  CHECK(chunks > 10);
}
