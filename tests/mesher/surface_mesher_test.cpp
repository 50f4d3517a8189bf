// The fast mesher against the reference mesher, chunk by chunk: random worlds, adversarial boxes, every 2x2x2 pattern,
// both aprons; plus determinism and rejected input.
#include "vtp/mesher/surface_mesher.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>

#include "mesher/reference_mesher.h"
#include "support/materials.h"
#include "support/random_world.h"

using namespace vtp::terrain;
using vtp::mesher::ChunkMesh;
using vtp::mesher::SurfaceMesher;
using vtp::test::kRock;
using vtp::test::MeshTriangle;
using vtp::test::VoxelGrid;

namespace {

// Reports the first few triangles only one side has; true when both are the same multiset.
bool sameTriangles(const std::vector<MeshTriangle>& fast, const std::vector<MeshTriangle>& reference) {
  const auto a = vtp::test::canonicalSorted(fast);
  const auto b = vtp::test::canonicalSorted(reference);
  if (a == b) return true;
  std::vector<MeshTriangle> only_fast, only_reference;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_fast));
  std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_reference));
  std::string text = "fast " + std::to_string(a.size()) + " triangles, reference " + std::to_string(b.size());
  for (std::size_t i = 0; i < std::min<std::size_t>(4, only_fast.size()); ++i) {
    text += "\n  only fast:      " + vtp::test::describe(only_fast[i]);
  }
  for (std::size_t i = 0; i < std::min<std::size_t>(4, only_reference.size()); ++i) {
    text += "\n  only reference: " + vtp::test::describe(only_reference[i]);
  }
  MESSAGE(text);
  return false;
}

// The non-air voxels of a grid as text, for reproducing a failure by hand (elided past 64 voxels).
std::string dumpNonAir(const VoxelGrid& g) {
  std::string text;
  int listed = 0;
  for (std::int32_t z = g.box.min.z; z < g.box.max.z; ++z) {
    for (std::int32_t y = g.box.min.y; y < g.box.max.y; ++y) {
      for (std::int32_t x = g.box.min.x; x < g.box.max.x; ++x) {
        const Voxel v = g.at({x, y, z});
        if (v == kAir) continue;
        if (++listed > 64) return text + " ...";
        text += " (" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) +
                ")=" + std::to_string(v.material) + "/" + std::to_string(v.occupancy);
      }
    }
  }
  return text;
}

// Checks one chunk against the reference with both aprons. `grid` must hold the chunk's 12^3 box.
// Returns the chunk's own triangle count.
std::size_t checkChunk(SurfaceMesher& mesher, ChunkMesh& out, const VoxelGrid& grid, ChunkCoord chunk) {
  const VoxelBox own = chunkBox(chunk);
  const VoxelBox near = vtp::test::apronBox(chunk, 1);
  const auto reference = vtp::test::referenceMesh(grid, own);
  const auto reference_ring = vtp::test::referenceMeshRing(grid, near, own);

  const auto narrow = vtp::test::fastMeshChunk(mesher, out, grid, chunk, vtp::mesher::kApron);
  bool ok = true;
  CHECK(out.owned_triangle_count == out.triangle_count);
  CHECK(narrow.neighbours.empty());
  ok &= sameTriangles(narrow.owned, reference);
  for (int i = 0; i < 3 * out.triangle_count; ++i) REQUIRE(out.indices[std::size_t(i)] < out.vertex_count);

  const auto wide = vtp::test::fastMeshChunk(mesher, out, grid, chunk, vtp::mesher::kWideApron);
  for (int i = 0; i < 3 * out.triangle_count; ++i) REQUIRE(out.indices[std::size_t(i)] < out.vertex_count);
  for (int i = 0; i < out.vertex_count; ++i) {
    const auto& v = out.vertices[std::size_t(i)];
    constexpr int kMin = -1535, kMax = 9727;  // the header's range: the cells of a 12^3 box
    REQUIRE((v.x >= kMin && v.x <= kMax && v.y >= kMin && v.y <= kMax && v.z >= kMin && v.z <= kMax));
  }
  CHECK(wide.owned.size() == narrow.owned.size());
  ok &= sameTriangles(wide.owned, narrow.owned);
  ok &= sameTriangles(wide.neighbours, reference_ring);
  CHECK(vtp::test::duplicateCount(wide.owned) == 0);
  if (!ok) {
    MESSAGE("chunk " << chunk.x << "," << chunk.y << "," << chunk.z << " box voxels:" << dumpNonAir(grid));
  }
  CHECK(ok);
  return reference.size();
}

// A raw (possibly non-canonical) voxel: any material, any occupancy, weighted towards solids, water and air.
Voxel rawNoise(std::mt19937_64& rng) {
  const int kind = int(rng() % 8);
  const auto occ = std::uint8_t(rng() % 256);
  if (kind == 0) return {0, occ};
  if (kind == 1) return {1, occ};
  return {std::uint8_t(2 + rng() % 254), occ};
}

// The 12^3 grid around a chunk, every voxel from `voxel(world coordinate)`.
VoxelGrid gridOf(ChunkCoord chunk, const std::function<Voxel(VoxelCoord)>& voxel) {
  VoxelGrid g = vtp::test::makeGrid(vtp::test::apronBox(chunk, vtp::mesher::kWideApron));
  std::size_t i = 0;
  for (std::int32_t z = g.box.min.z; z < g.box.max.z; ++z) {
    for (std::int32_t y = g.box.min.y; y < g.box.max.y; ++y) {
      for (std::int32_t x = g.box.min.x; x < g.box.max.x; ++x) g.voxels[i++] = voxel({x, y, z});
    }
  }
  return g;
}

}  // namespace

TEST_CASE("SurfaceMesher: random worlds and adversarial boxes mesh to exactly the reference mesher's triangles") {
  SurfaceMesher mesher;
  ChunkMesh out;

  SUBCASE("chunks of random worlds with random edits match the reference with both aprons") {
    std::size_t triangles = 0;
    for (std::uint64_t seed : {11u, 12u, 13u, 14u, 15u, 16u}) {
      std::mt19937_64 rng(seed);
      auto world = vtp::test::makeWorld();
      const VoxelBox region{{-16, -16, -16}, {16, 16, 16}};
      vtp::test::randomEdits(*world, region, 24, rng);
      // A patch of random voxels across a chunk corner at (-8, 0, 8).
      const VoxelBox patch{{-11, -3, 5}, {-5, 3, 11}};
      std::vector<Voxel> voxels(std::size_t(patch.volume()));
      for (auto& v : voxels) v = vtp::test::randomVoxel(rng);
      REQUIRE(world->writeRegion(patch, voxels).ok());
      for (std::int32_t cz = -2; cz < 2; ++cz) {
        for (std::int32_t cy = -2; cy < 2; ++cy) {
          for (std::int32_t cx = -2; cx < 2; ++cx) {
            const ChunkCoord c{cx, cy, cz};
            triangles += checkChunk(mesher, out, vtp::test::readGrid(*world, vtp::test::apronBox(c, 2)), c);
          }
        }
      }
    }
    CHECK(triangles > 1000);
  }

  SUBCASE("white noise, raw and canonical, matches the reference") {
    std::mt19937_64 rng(21);
    for (int i = 0; i < 48; ++i) {
      const ChunkCoord c{int(rng() % 7) - 3, int(rng() % 7) - 3, int(rng() % 7) - 3};
      const bool raw = i % 2 == 0;
      const auto g = gridOf(c, [&](VoxelCoord) { return raw ? rawNoise(rng) : vtp::test::randomVoxel(rng); });
      CHECK(checkChunk(mesher, out, g, c) > 100);
    }
  }

  SUBCASE("checkerboards match the reference") {
    const ChunkCoord c{-1, 0, 2};
    for (int period : {1, 2, 3}) {
      for (std::uint8_t occ : {std::uint8_t(128), std::uint8_t(200), std::uint8_t(255)}) {
        auto parity = [&](VoxelCoord v) { return ((v.x / period + v.y / period + v.z / period) & 1) != 0; };
        checkChunk(mesher, out, gridOf(c, [&](VoxelCoord v) { return parity(v) ? Voxel{3, occ} : kAir; }), c);
        // 2D checkerboard columns and a solid/water board.
        checkChunk(mesher, out,
                   gridOf(c,
                          [&](VoxelCoord v) {
                            return ((v.x + v.z) & 1) != 0 ? Voxel{4, occ} : Voxel{1, 255};
                          }),
                   c);
      }
    }
  }

  SUBCASE("a single solid voxel anywhere in the box, apron included, matches the reference") {
    const ChunkCoord c{0, -1, 0};
    const VoxelCoord o = chunkOrigin(c);
    const int kPositions[] = {-2, -1, 0, 1, 4, 6, 7, 8, 9};
    for (int z : kPositions) {
      for (int y : kPositions) {
        for (int x : kPositions) {
          const VoxelCoord s{o.x + x, o.y + y, o.z + z};
          checkChunk(mesher, out, gridOf(c, [&](VoxelCoord v) { return v == s ? Voxel{7, 130} : kAir; }), c);
        }
      }
    }
  }

  SUBCASE("one-voxel walls and pillars on every axis and position match the reference") {
    const ChunkCoord c{-2, -2, -2};
    const VoxelCoord o = chunkOrigin(c);
    for (int axis = 0; axis < 3; ++axis) {
      for (int k = -2; k < 10; ++k) {
        auto along = [&](VoxelCoord v) { return (axis == 0 ? v.x - o.x : axis == 1 ? v.y - o.y : v.z - o.z); };
        auto across = [&](VoxelCoord v) { return (axis == 0 ? v.y - o.y : axis == 1 ? v.z - o.z : v.x - o.x); };
        checkChunk(mesher, out, gridOf(c, [&](VoxelCoord v) { return along(v) == k ? Voxel{2, 140} : kAir; }), c);
        checkChunk(mesher, out,
                   gridOf(c,
                          [&](VoxelCoord v) {
                            return along(v) == k && across(v) == 3 ? Voxel{5, 255} : Voxel{6, 100};
                          }),
                   c);
        // An air wall through solid.
        checkChunk(mesher, out, gridOf(c, [&](VoxelCoord v) { return along(v) == k ? Voxel{1, 30} : kRock; }), c);
      }
    }
  }

  SUBCASE("full, empty and water-only boxes give no triangles") {
    const ChunkCoord c{3, -4, 1};
    for (Voxel fill : {kAir, kRock, Voxel{2, 128}, Voxel{1, 255}, Voxel{4, 127}, Voxel{9, 0}, Voxel{0, 200}}) {
      const auto g = gridOf(c, [&](VoxelCoord) { return fill; });
      CHECK(checkChunk(mesher, out, g, c) == 0);
      CHECK(out.triangle_count == 0);
    }
    // Not uniform, but all outside (air, water, solids below 128) or all inside (mixed solids and weights).
    std::mt19937_64 rng(61);
    const Voxel kOutside[] = {kAir, Voxel{1, 90}, Voxel{3, 127}, Voxel{5, 1}};
    const Voxel kInside[] = {Voxel{2, 128}, Voxel{3, 255}, Voxel{6, 200}};
    CHECK(checkChunk(mesher, out, gridOf(c, [&](VoxelCoord) { return kOutside[rng() % 4]; }), c) == 0);
    CHECK(checkChunk(mesher, out, gridOf(c, [&](VoxelCoord) { return kInside[rng() % 3]; }), c) == 0);
  }

  SUBCASE("a solid chunk in air and an air chunk in solid match the reference on every face") {
    const ChunkCoord c{1, 1, -1};
    const VoxelBox chunk = chunkBox(c);
    CHECK(checkChunk(mesher, out, gridOf(c, [&](VoxelCoord v) { return chunk.contains(v) ? kRock : kAir; }), c) > 0);
    CHECK(checkChunk(mesher, out, gridOf(c, [&](VoxelCoord v) { return chunk.contains(v) ? kAir : kRock; }), c) > 0);
    // An all-air chunk owns the faces of a solid floor just above it.
    const std::int32_t top = chunk.max.y;
    CHECK(checkChunk(mesher, out, gridOf(c, [&](VoxelCoord v) { return v.y >= top ? kRock : kAir; }), c) == 128);
  }

  SUBCASE("water next to solid and solids below 128 match the reference") {
    std::mt19937_64 rng(31);
    const ChunkCoord c{0, 0, -3};
    for (int i = 0; i < 12; ++i) {
      const auto g = gridOf(c, [&](VoxelCoord v) {
        const bool solid_side = (v.x + 2 * v.y - v.z) % 5 < 2;
        if (solid_side) return Voxel{std::uint8_t(2 + rng() % 5), std::uint8_t(rng() % 256)};
        return rng() % 2 == 0 ? Voxel{1, std::uint8_t(1 + rng() % 255)} : Voxel{3, std::uint8_t(rng() % 128)};
      });
      CHECK(checkChunk(mesher, out, g, c) > 0);
    }
  }

  SUBCASE("every pair of partly filled weights across an edge crosses where the reference says (the linear rule)") {
    // One partly filled inside voxel with a partly filled solid beside it, along x, y or z, before or after it (so
    // either end of the edge is the inside one): the mesher's quotient in single precision (a reciprocal estimate and
    // a Newton step) and its exact mean in 1/65280 voxel against the reference's, for all 127 x 127 pairs.
    const ChunkCoord c{-1, 0, 1};
    const VoxelCoord o = chunkOrigin(c);
    for (int in = 128; in <= 254; ++in) {
      for (int outside = 1; outside <= 127; ++outside) {
        const int axis = (in + outside) % 3, side = (in / 3 + outside) % 2 != 0 ? 1 : -1;
        const auto g = gridOf(c, [&](VoxelCoord v) {
          const int x = v.x - o.x, y = v.y - o.y, z = v.z - o.z;
          if (x == 3 && y == 4 && z == 5) return Voxel{2, std::uint8_t(in)};
          if (x == 3 + side * (axis == 0) && y == 4 + side * (axis == 1) && z == 5 + side * (axis == 2)) {
            return Voxel{6, std::uint8_t(outside)};
          }
          return kAir;
        });
        const auto fast = vtp::test::fastMeshChunk(mesher, out, g, c, vtp::mesher::kApron).owned;
        REQUIRE(fast.size() == 12);  // the inside voxel's six faces
        if (!sameTriangles(fast, vtp::test::referenceMesh(g, chunkBox(c)))) FAIL_CHECK("in " << in << " out " << outside);
      }
    }
  }


  SUBCASE("extreme weights match the reference: inside 128 against 127, air and water; 255 against 127") {
    std::mt19937_64 rng(41);
    const ChunkCoord c{-3, 2, 0};
    const Voxel kInside[] = {Voxel{2, 128}, Voxel{2, 255}};
    const Voxel kOutside[] = {Voxel{3, 127}, kAir, Voxel{1, 255}, Voxel{0, 255}, Voxel{8, 0}};
    for (Voxel in : kInside) {
      for (Voxel outside : kOutside) {
        const auto g = gridOf(c, [&](VoxelCoord) { return rng() % 2 == 0 ? in : outside; });
        CHECK(checkChunk(mesher, out, g, c) > 0);
      }
    }
  }
}

TEST_CASE("SurfaceMesher: every 2x2x2 cell pattern matches the reference and meshes closed and outward") {
  SurfaceMesher mesher;
  ChunkMesh out;

  SUBCASE(
      "every inside/outside pattern of a cell, at several weights and backgrounds, matches the reference and is "
      "closed and outward") {
    // (inside voxel, outside voxel) pairs: the extremes of t and a mix of materials.
    const std::pair<Voxel, Voxel> kLevels[] = {{Voxel{2, 255}, kAir},          {Voxel{3, 128}, kAir},
                                               {Voxel{4, 200}, Voxel{5, 127}}, {Voxel{2, 128}, Voxel{6, 127}},
                                               {Voxel{5, 170}, Voxel{1, 255}}, {Voxel{7, 255}, Voxel{8, 60}}};
    const ChunkCoord c{-1, 0, -1};
    const VoxelCoord o = chunkOrigin(c);
    std::size_t non_manifold = 0;
    for (int pattern = 0; pattern < 256; ++pattern) {
      for (const auto& [in, outside] : kLevels) {
        for (int background_solid = 0; background_solid < 2; ++background_solid) {
          // The cell's 8 voxels at chunk voxels 3..4; the background is outside (air) or inside (the pattern's outside
          // voxels are then cavities), so the surface is closed either way.
          const auto g = gridOf(c, [&](VoxelCoord v) {
            const int x = v.x - o.x - 3, y = v.y - o.y - 3, z = v.z - o.z - 3;
            if (x < 0 || x > 1 || y < 0 || y > 1 || z < 0 || z > 1) return background_solid ? Voxel{2, 255} : kAir;
            return (pattern >> (x + 2 * y + 4 * z)) & 1 ? in : outside;
          });
          checkChunk(mesher, out, g, c);
          const auto mesh = vtp::test::fastMeshChunk(mesher, out, g, c, vtp::mesher::kApron).owned;
          const auto census = vtp::test::edgeCensus(mesh);
          CHECK(census.unmatched == 0);
          CHECK(census.boundary == 0);
          non_manifold += census.non_manifold;
          const std::int64_t volume = vtp::test::signedVolume6(mesh);
          if (background_solid == 0) {
            CHECK((pattern == 0 ? mesh.empty() : volume > 0));
          } else {
            CHECK((pattern == 255 ? mesh.empty() : volume < 0));
          }
        }
      }
    }
    MESSAGE("non-manifold edges over all 2x2x2 patterns: " << non_manifold);
  }
}

TEST_CASE("SurfaceMesher: the same box gives the same bytes and a box of the wrong size or apron is refused") {
  SurfaceMesher mesher;
  ChunkMesh out;

  SUBCASE("the same box gives the same bytes, whatever was meshed before and whichever mesher runs") {
    std::mt19937_64 rng(51);
    for (int apron : {vtp::mesher::kApron, vtp::mesher::kWideApron}) {
      for (int i = 0; i < 8; ++i) {
        std::vector<Voxel> box(std::size_t(vtp::mesher::boxVolume(apron)));
        for (auto& v : box) v = i % 2 == 0 ? rawNoise(rng) : vtp::test::randomVoxel(rng);
        std::vector<Voxel> other(box.size());
        for (auto& v : other) v = rawNoise(rng);

        ChunkMesh first;
        REQUIRE(mesher.mesh(box, apron, first).ok());
        // A second mesher whose scratch and output have just held another box.
        SurfaceMesher second_mesher;
        ChunkMesh second;
        REQUIRE(second_mesher.mesh(other, apron, second).ok());
        REQUIRE(second_mesher.mesh(box, apron, second).ok());
        CHECK(first.triangle_count > 0);
        CHECK(first.triangle_count == second.triangle_count);
        CHECK(first.owned_triangle_count == second.owned_triangle_count);
        REQUIRE(first.vertex_count == second.vertex_count);
        CHECK(std::memcmp(first.vertices.data(), second.vertices.data(),
                          sizeof(vtp::mesher::Vertex) * std::size_t(first.vertex_count)) == 0);
        CHECK(std::memcmp(first.indices.data(), second.indices.data(), 2 * 3 * std::size_t(first.triangle_count)) == 0);
        CHECK(std::memcmp(first.materials.data(), second.materials.data(), std::size_t(first.triangle_count)) == 0);
      }
    }
  }

  SUBCASE("a box of the wrong size or an apron other than 1 and 2 is an error and leaves the output empty") {
    std::vector<Voxel> box10(1000, kRock), box12(1728, kRock), box11(1331, kRock);
    // One air voxel inside the chunk (owned triangles) and one in the apron at x = -1 (neighbours' triangles).
    box10[5 + 10 * 5 + 100 * 5] = kAir;
    box12[1 + 12 * 5 + 144 * 5] = kAir;
    auto expectRejected = [&](std::span<const Voxel> box, int apron) {
      // Fill the output first so "left empty" is observable.
      REQUIRE(mesher.mesh(box10, vtp::mesher::kApron, out).ok());
      REQUIRE(out.triangle_count > 0);
      const auto r = mesher.mesh(box, apron, out);
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().code == vtp::ErrorCode::kInvalidArgument);
      CHECK_FALSE(r.error().message.empty());
      CHECK(out.triangle_count == 0);
      CHECK(out.owned_triangle_count == 0);
      CHECK(out.vertex_count == 0);
    };
    expectRejected(box12, vtp::mesher::kApron);
    expectRejected(box10, vtp::mesher::kWideApron);
    expectRejected(std::span<const Voxel>(box10).first(999), vtp::mesher::kApron);
    expectRejected({}, vtp::mesher::kApron);
    expectRejected(box11, vtp::mesher::kApron);
    for (int apron : {-1, 0, 3, 4}) {
      expectRejected(box10, apron);
      expectRejected(box12, apron);
    }
    std::vector<Voxel> box14(14 * 14 * 14, kRock);
    expectRejected(box14, 3);
    std::vector<Voxel> box8(8 * 8 * 8, kRock);
    expectRejected(box8, 0);
    // And the valid sizes still work afterwards.
    CHECK(mesher.mesh(box12, vtp::mesher::kWideApron, out).ok());
    CHECK(out.triangle_count > out.owned_triangle_count);
  }
}
