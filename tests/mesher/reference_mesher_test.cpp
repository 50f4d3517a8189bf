// The oracle checked against hand-computed cases and the header's own promises before it judges the fast mesher.
#include "mesher/reference_mesher.h"

#include <doctest/doctest.h>

#include <random>

#include "support/materials.h"

using namespace vtp::terrain;
using vtp::test::FixedPoint;
using vtp::test::kRock;
using vtp::test::kScale;
using vtp::test::MeshTriangle;
using vtp::test::VoxelGrid;

namespace {

// A grid around voxel box `inner` with one voxel of margin, filled with `fill`.
VoxelGrid gridAround(const VoxelBox& inner, Voxel fill) {
  return vtp::test::makeGrid(
      {{inner.min.x - 1, inner.min.y - 1, inner.min.z - 1}, {inner.max.x + 1, inner.max.y + 1, inner.max.z + 1}}, fill);
}

void set(VoxelGrid& g, VoxelCoord v, Voxel value) {
  const std::int64_t sx = g.box.max.x - g.box.min.x, sy = g.box.max.y - g.box.min.y;
  g.voxels.at(std::size_t((v.x - g.box.min.x) + sx * ((v.y - g.box.min.y) + sy * std::int64_t(v.z - g.box.min.z)))) =
      value;
}

}  // namespace

TEST_CASE("ReferenceMesher: the oracle gives the hand-computed results and keeps its header's promises") {
  SUBCASE("a lone full voxel gives a closed 341/1024-voxel cube around its centre, wound outwards") {
    // Every crossing is at the face (t = (255 + 0 - 127.5) / 255 = 1/2); a cell's vertex is the mean of its 3
    // crossings: 5/6 voxel from the cell's lowest centre below (floor(5120/6) = 853, centre - 171) and 1/6 above
    // (floor(1024/6) = 170, centre + 170).
    const VoxelCoord s{-3, 5, 0};
    const VoxelBox owned{{-5, 3, -2}, {-1, 7, 2}};
    VoxelGrid g = gridAround(owned, kAir);
    set(g, s, kRock);
    std::vector<VoxelCoord> inside;
    const auto tris = vtp::test::referenceMesh(g, owned, &inside);
    REQUIRE(tris.size() == 12);
    constexpr std::int32_t kSide = 341, kLow = kScale / 2 - 171;
    const std::int32_t lo[3] = {kScale * s.x + kLow, kScale * s.y + kLow, kScale * s.z + kLow};
    for (std::size_t i = 0; i < tris.size(); ++i) {
      CHECK(inside[i] == s);
      CHECK(tris[i].material == 2);
      for (const FixedPoint& p : tris[i].v) {
        for (std::size_t a = 0; a < 3; ++a) CHECK((p[a] == lo[a] || p[a] == lo[a] + kSide));
      }
      // Each triangle is half a face: twice its area is 341^2, along the face's outward axis.
      const auto c = vtp::test::crossProduct(tris[i]);
      int nonzero = 0;
      for (std::size_t a = 0; a < 3; ++a) {
        if (c[a] == 0) continue;
        ++nonzero;
        CHECK((c[a] == kSide * kSide || c[a] == -kSide * kSide));
        const std::int32_t centroid3 = tris[i].v[0][a] + tris[i].v[1][a] + tris[i].v[2][a];
        const std::int32_t centre3 = 3 * (kScale * (a == 0 ? s.x : a == 1 ? s.y : s.z) + kScale / 2);
        CHECK((c[a] > 0) == (centroid3 > centre3));
      }
      CHECK(nonzero == 1);
    }
    CHECK(vtp::test::signedVolume6(tris) == 6 * std::int64_t(kSide) * kSide * kSide);
    const auto census = vtp::test::edgeCensus(tris);
    CHECK(census.unmatched == 0);
    CHECK(census.boundary == 0);
    CHECK(census.non_manifold == 0);
  }

  SUBCASE("a lone air voxel in solid gives a closed cube wound inwards") {
    const VoxelBox owned{{0, 0, 0}, {4, 4, 4}};
    VoxelGrid g = gridAround(owned, Voxel{3, 200});
    set(g, {2, 1, 2}, kAir);
    const auto tris = vtp::test::referenceMesh(g, owned);
    REQUIRE(tris.size() == 12);
    CHECK(vtp::test::signedVolume6(tris) < 0);
    for (const auto& t : tris) CHECK(t.material == 3);
    CHECK(vtp::test::edgeCensus(tris).unmatched == 0);
  }

  SUBCASE("the crossing follows t = (e_in + e_out - 127.5) / 255 on a flat layer") {
    // Voxels y < 2 full, y = 2 at occupancy q, air above: the surface is flat at 2 + q / 255 rounded down to the grid,
    // whatever material the partial voxel has (q < 128 crosses from voxel 1 at (255 + q - 127.5) / 255, q >= 128
    // from voxel 2 at (q - 127.5) / 255: both 2 + q / 255).
    for (int q = 0; q < 256; q += 17) {
      const VoxelBox owned{{0, 0, 0}, {3, 5, 3}};
      VoxelGrid g = gridAround(owned, kAir);
      for (std::int32_t z = -1; z <= 3; ++z) {
        for (std::int32_t x = -1; x <= 3; ++x) {
          for (std::int32_t y = -1; y < 2; ++y) set(g, {x, y, z}, kRock);
          set(g, {x, 2, z}, Voxel{5, std::uint8_t(q)});
        }
      }
      const std::int32_t expected = 2 * kScale + kScale * q / 255;
      const auto tris = vtp::test::referenceMesh(g, owned);
      REQUIRE(tris.size() == 2 * 9);
      for (const auto& t : tris) {
        for (const FixedPoint& p : t.v) CHECK(p[1] == expected);
        CHECK(t.material == (q >= 128 ? 5 : 2));
        CHECK(vtp::test::crossProduct(t)[1] > 0);
      }
    }
  }

  SUBCASE("water, air and solid below 128 are all outside but only solids weigh") {
    // Inside at 128 next to a solid at 127: both partly filled, the linear crossing (128 - 127.5) / (128 - 127) voxel
    // = 128/256; next to a solid at 100: 0.5 / 28 voxel, 5/256 rounded (the column rule would say 100.5/255); next to
    // water at 255 or air (weight 0): t = (128 + 0 - 127.5) / 255. Below, t in 1/65280 voxel.
    const VoxelBox owned{{0, 0, 0}, {3, 3, 3}};
    for (const auto& [outside, t] : {std::pair{Voxel{4, 127}, 128 * 255}, std::pair{Voxel{4, 100}, 5 * 255},
                                     std::pair{Voxel{1, 255}, 128}, std::pair{Voxel{0, 0}, 128},
                                     std::pair{Voxel{0, 200}, 128}}) {
      VoxelGrid g = gridAround(owned, outside);
      set(g, {1, 1, 1}, Voxel{6, 128});
      const auto tris = vtp::test::referenceMesh(g, owned);
      REQUIRE(tris.size() == 12);
      // The cell above-right of the voxel sees crossings t along each axis: mean t/3 in 1/1024 voxel, rounded down,
      // clamped to >= 1.
      bool found = false;
      const std::int32_t m = std::max(1, kScale * t / (3 * 65280));
      for (const auto& tri : tris) {
        const std::int32_t at = 3 * kScale / 2 + m;  // from voxel (1, 1, 1)'s centre
        for (const FixedPoint& p : tri.v) found |= p == FixedPoint{at, at, at};
      }
      CHECK(found);
    }
  }

  SUBCASE("a quad is split on its shorter diagonal, v0-v2 on a tie, and never into a zero-area triangle") {
    using Quad = std::array<FixedPoint, 4>;
    using Split = std::array<std::array<FixedPoint, 3>, 2>;
    const FixedPoint a{0, 0, 0}, b{100, 0, 0}, c{100, 100, 0}, d{0, 100, 0};
    CHECK(vtp::test::splitQuad(Quad{a, b, c, d}) == Split{{{a, b, c}, {a, c, d}}});
    const FixedPoint c_far{150, 150, 0};  // |v0-v2| longer: split on v1-v3
    CHECK(vtp::test::splitQuad(Quad{a, b, c_far, d}) == Split{{{b, c_far, d}, {b, d, a}}});
    // v1 on the segment v0-v2 while v0-v2 is the shorter diagonal: (v0,v1,v2) would have zero area.
    const FixedPoint mid{100, 0, 0}, end{200, 0, 0}, top{100, 300, 0};
    CHECK(vtp::test::splitQuad(Quad{a, mid, end, top}) == Split{{{mid, end, top}, {mid, top, a}}});
  }

  SUBCASE("meshing a region as one box equals meshing its sub-boxes, and the ring adds the rest") {
    std::mt19937_64 rng(7);
    const VoxelBox outer{{-9, -4, -9}, {7, 8, 5}};
    VoxelGrid g = gridAround(outer, kAir);
    for (auto& v : g.voxels) v = Voxel{std::uint8_t(rng() % 4), std::uint8_t(rng() % 256)};
    const VoxelBox inner{{-8, 0, -8}, {0, 8, 0}};
    auto whole = vtp::test::canonicalSorted(vtp::test::referenceMesh(g, outer));
    auto parts = vtp::test::referenceMesh(g, inner);
    const auto ring = vtp::test::referenceMeshRing(g, outer, inner);
    parts.insert(parts.end(), ring.begin(), ring.end());
    CHECK(!whole.empty());
    CHECK(vtp::test::canonicalSorted(parts) == whole);
    CHECK(vtp::test::duplicateCount(whole) == 0);
  }

  SUBCASE("an owned voxel whose neighbourhood leaves the grid is refused") {
    const VoxelBox owned{{0, 0, 0}, {2, 2, 2}};
    VoxelGrid g = gridAround(owned, kAir);
    CHECK_NOTHROW(vtp::test::referenceMesh(g, owned));
    CHECK_THROWS_AS(vtp::test::referenceMesh(g, VoxelBox{{0, 0, 0}, {3, 2, 2}}), std::invalid_argument);
    CHECK_THROWS_AS(vtp::test::referenceMesh(g, VoxelBox{{-1, 0, 0}, {2, 2, 2}}), std::invalid_argument);
  }

  SUBCASE("the mesh checks catch what they look for") {
    // Mesh checks that never fire would make every invariant test vacuous.
    const VoxelBox owned{{0, 0, 0}, {3, 3, 3}};
    VoxelGrid g = gridAround(owned, kAir);
    set(g, {1, 1, 1}, kRock);
    auto tris = vtp::test::referenceMesh(g, owned);
    REQUIRE(tris.size() == 12);
    auto open = tris;
    open.pop_back();
    CHECK(vtp::test::edgeCensus(open).unmatched == 3);
    CHECK(vtp::test::edgeCensus(open).boundary == 3);
    auto flipped = tris;
    std::swap(flipped[0].v[1], flipped[0].v[2]);
    CHECK(vtp::test::edgeCensus(flipped).unmatched > 0);
    auto doubled = tris;
    doubled.insert(doubled.end(), tris.begin(), tris.end());
    CHECK(vtp::test::edgeCensus(doubled).non_manifold == 18);
    CHECK(vtp::test::duplicateCount(doubled) == 12);
    CHECK(vtp::test::canonicalSorted(tris) != vtp::test::canonicalSorted(flipped));
    // A vertex in the middle of another triangle's edge is a T-junction.
    const FixedPoint a{0, 0, 0}, b{512, 0, 0}, c{0, 512, 0}, mid{256, 0, 0}, below{256, -300, 0};
    CHECK(vtp::test::tJunctionCount({MeshTriangle{{a, b, c}, 2}, MeshTriangle{{a, below, mid}, 2}}) == 1);
    CHECK(vtp::test::tJunctionCount({MeshTriangle{{a, b, c}, 2}, MeshTriangle{{a, below, b}, 2}}) == 0);
    CHECK(vtp::test::tJunctionCount(tris) == 0);
    CHECK(vtp::test::inconsistentCellCount(tris) == 0);
    auto moved = tris;
    moved[0].v[0][0] += 1;
    CHECK(vtp::test::inconsistentCellCount(moved) == 1);
    // Spill: a triangle two voxels away from the only solid voxel is caught.
    for (const auto& t : tris) CHECK(vtp::test::withinSolidNeighbourhood(t, g));
    MeshTriangle far = tris[0];
    for (auto& p : far.v) p[1] += 2 * kScale;
    CHECK_FALSE(vtp::test::withinSolidNeighbourhood(far, g));
  }
}
