// The mesher's invariants (surface_mesher.h) as property tests: seam-exact, watertight, bounded spill, no zero-area or
// duplicate triangles, the layer rule and outward winding. Regions are meshed chunk by chunk with the fast mesher, as
// physics will.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include "mesher/reference_mesher.h"
#include "support/materials.h"
#include "support/random_world.h"
#include "vtp/mesher/surface_mesher.h"

using namespace vtp::terrain;
using vtp::mesher::ChunkMesh;
using vtp::mesher::SurfaceMesher;
using vtp::test::FixedPoint;
using vtp::test::kRock;
using vtp::test::kScale;
using vtp::test::MeshTriangle;
using vtp::test::VoxelGrid;

namespace {

// The voxels of chunks [lo, hi) (hi exclusive).
VoxelBox voxelsOf(ChunkCoord lo, ChunkCoord hi) { return {chunkOrigin(lo), chunkOrigin(hi)}; }

// Every chunk of [lo, hi) meshed on its own by the fast mesher, owned triangles only, in world fixed point.
std::vector<MeshTriangle> meshChunkByChunk(const World& world, ChunkCoord lo, ChunkCoord hi, int apron) {
  const VoxelGrid grid = vtp::test::readGrid(world, grown(voxelsOf(lo, hi), apron));
  SurfaceMesher mesher;
  ChunkMesh out;
  std::vector<MeshTriangle> all;
  for (std::int32_t z = lo.z; z < hi.z; ++z) {
    for (std::int32_t y = lo.y; y < hi.y; ++y) {
      for (std::int32_t x = lo.x; x < hi.x; ++x) {
        const auto chunk = vtp::test::fastMeshChunk(mesher, out, grid, {x, y, z}, apron);
        all.insert(all.end(), chunk.owned.begin(), chunk.owned.end());
      }
    }
  }
  return all;
}

// Edits that straddle chunk borders: shapes centred on chunk corners, edges and faces inside `region`.
void borderEdits(World& world, const VoxelBox& region, int edits, std::mt19937_64& rng) {
  // A multiple of 8 in [lo, hi]: the arithmetic shift rounds towards -infinity, so this is ceil(lo / 8) * 8.
  auto onGrid = [&](std::int32_t lo, std::int32_t hi) {
    const std::int32_t first = ((lo + 7) >> 3) << 3;
    return double(first + 8 * std::int32_t(rng() % std::uint64_t((hi - first) / 8 + 1)));
  };
  for (int i = 0; i < edits; ++i) {
    const Vec3d c{onGrid(region.min.x, region.max.x) + (rng() % 2 ? 0.0 : 0.37),
                  onGrid(region.min.y, region.max.y) + (rng() % 2 ? 0.0 : -0.61),
                  onGrid(region.min.z, region.max.z) + (rng() % 3 ? 0.0 : 0.5)};
    const double r = 1.0 + double(rng() % 50) / 10.0;
    const auto material = std::uint8_t(2 + rng() % 5);
    switch (rng() % 4) {
      case 0:
        REQUIRE(world.fillSphere(c, r, material).ok());
        break;
      case 1:
        REQUIRE(world.clearSphere(c, r).ok());
        break;
      case 2:
        REQUIRE(world.fillCylinder(c, r, 2.5 * r, material).ok());
        break;
      default:
        REQUIRE(world
                    .apply(ShapeEdit{BoxShape{{c.x - r, c.y - 0.3 * r, c.z - 1.2}, {c.x + 0.7, c.y + r, c.z + r}},
                                     EditOp::kFill, material})
                    .ok());
        break;
    }
  }
}

// Clears everything in `outer` outside `inner`, so the solid in `outer` is closed off by air.
void clearOutside(World& world, const VoxelBox& outer, const VoxelBox& inner) {
  const VoxelBox slabs[] = {
      {outer.min, {inner.min.x, outer.max.y, outer.max.z}}, {{inner.max.x, outer.min.y, outer.min.z}, outer.max},
      {outer.min, {outer.max.x, inner.min.y, outer.max.z}}, {{outer.min.x, inner.max.y, outer.min.z}, outer.max},
      {outer.min, {outer.max.x, outer.max.y, inner.min.z}}, {{outer.min.x, outer.min.y, inner.max.z}, outer.max}};
  for (const VoxelBox& s : slabs) REQUIRE(world.clearBox(s).ok());
}

// A world with random closed solids: random and border-straddling edits, cleared outside `inner` (out to 12 voxels
// beyond it, further than any of these edits reaches).
std::unique_ptr<World> closedWorld(std::uint64_t seed, const VoxelBox& inner) {
  std::mt19937_64 rng(seed);
  auto world = vtp::test::makeWorld();
  vtp::test::randomEdits(*world, inner, 20, rng);
  borderEdits(*world, inner, 12, rng);
  clearOutside(*world, grown(inner, 12), inner);
  return world;
}

}  // namespace

TEST_CASE("SurfaceMesher: meshing chunk by chunk gives the whole region's surface at seams") {
  SUBCASE("meshing a region chunk by chunk gives exactly the triangles of meshing it as one box") {
    std::size_t total = 0;
    for (std::uint64_t seed : {101u, 102u, 103u, 104u, 105u, 106u, 107u, 108u}) {
      std::mt19937_64 rng(seed);
      auto world = vtp::test::makeWorld();
      // 27 chunks from voxel -16 to 8: negative coordinates and the origin's seams.
      const ChunkCoord lo{-2, -2, -2}, hi{1, 1, 1};
      const VoxelBox region = voxelsOf(lo, hi);
      vtp::test::randomEdits(*world, region, 16, rng);
      borderEdits(*world, region, 16, rng);
      const auto reference = vtp::test::referenceMesh(vtp::test::readGrid(*world, grown(region, 1)), region);
      for (int apron : {vtp::mesher::kApron, vtp::mesher::kWideApron}) {
        const auto chunked = meshChunkByChunk(*world, lo, hi, apron);
        CHECK(chunked.size() == reference.size());
        CHECK(vtp::test::canonicalSorted(chunked) == vtp::test::canonicalSorted(reference));
        CHECK(vtp::test::duplicateCount(chunked) == 0);
        CHECK(vtp::test::inconsistentCellCount(chunked) == 0);
      }
      total += reference.size();
    }
    CHECK(total > 5000);
  }

  SUBCASE("far from the origin, seams are exact too") {
    std::mt19937_64 rng(109);
    auto world = vtp::test::makeWorld();
    const ChunkCoord lo{-131072, 4000, -7}, hi{-131070, 4002, -5};
    const VoxelBox region = voxelsOf(lo, hi);
    vtp::test::randomEdits(*world, region, 10, rng);
    borderEdits(*world, region, 10, rng);
    const auto reference = vtp::test::referenceMesh(vtp::test::readGrid(*world, grown(region, 1)), region);
    const auto chunked = meshChunkByChunk(*world, lo, hi, vtp::mesher::kApron);
    CHECK(!reference.empty());
    CHECK(vtp::test::canonicalSorted(chunked) == vtp::test::canonicalSorted(reference));
  }
}

TEST_CASE("SurfaceMesher: closed solids meshed chunk by chunk are watertight and wound one way without T-junctions") {
  SUBCASE(
      "closed random solids meshed chunk by chunk are closed, consistently wound, without T-junctions, and "
      "share every seam vertex") {
    std::size_t non_manifold = 0, edges = 0;
    for (std::uint64_t seed : {201u, 202u, 203u, 204u, 205u, 206u, 207u, 208u}) {
      // Solids only in [-14, 14)^3, meshed over chunks -2..1 (voxels -16..16): every edge they touch is meshed.
      auto world = closedWorld(seed, VoxelBox{{-14, -14, -14}, {14, 14, 14}});
      const auto mesh = meshChunkByChunk(*world, {-2, -2, -2}, {2, 2, 2}, vtp::mesher::kApron);
      REQUIRE(mesh.size() > 100);
      const auto census = vtp::test::edgeCensus(mesh);
      CHECK(census.unmatched == 0);
      CHECK(census.boundary == 0);
      CHECK(vtp::test::tJunctionCount(mesh) == 0);
      CHECK(vtp::test::inconsistentCellCount(mesh) == 0);
      CHECK(vtp::test::signedVolume6(mesh) > 0);
      non_manifold += census.non_manifold;
      edges += census.checked_edges;
    }
    MESSAGE("random closed solids: " << non_manifold << " non-manifold edges of " << edges);
  }

  SUBCASE("closed blocks of white noise and checkerboard are closed and consistently wound") {
    std::mt19937_64 rng(209);
    const VoxelBox block{{-6, -5, -6}, {6, 5, 7}};
    for (int kind = 0; kind < 4; ++kind) {
      auto world = vtp::test::makeWorld();
      std::vector<Voxel> voxels(std::size_t(block.volume()));
      std::size_t i = 0;
      for (std::int32_t z = block.min.z; z < block.max.z; ++z) {
        for (std::int32_t y = block.min.y; y < block.max.y; ++y) {
          for (std::int32_t x = block.min.x; x < block.max.x; ++x) {
            const bool board = ((x + y + z) & 1) != 0;
            // Kinds 0, 1: canonical noise; 2: a checkerboard of barely-inside voxels in air; 3: full ones in water.
            const Voxel solid = kind == 2 ? Voxel{3, 128} : Voxel{3, 255};
            const Voxel gap = kind == 2 ? kAir : Voxel{1, 255};
            voxels[i++] = kind < 2 ? vtp::test::randomVoxel(rng) : (board ? solid : gap);
          }
        }
      }
      REQUIRE(world->writeRegion(block, voxels).ok());
      const auto mesh = meshChunkByChunk(*world, {-1, -1, -1}, {1, 1, 1}, vtp::mesher::kApron);
      REQUIRE(!mesh.empty());
      const auto census = vtp::test::edgeCensus(mesh);
      CHECK(census.unmatched == 0);
      CHECK(census.boundary == 0);
      CHECK(vtp::test::tJunctionCount(mesh) == 0);
      CHECK(vtp::test::signedVolume6(mesh) > 0);
      MESSAGE(std::string(kind < 2 ? "white noise" : "checkerboard")
              << " block: " << census.non_manifold << " non-manifold edges of " << census.checked_edges);
    }
  }
}

TEST_CASE("SurfaceMesher: every triangle stays near a solid-inside voxel and none has zero area or repeats") {
  SUBCASE("every triangle lies within the 3^3 voxels around a solid-inside voxel") {
    SurfaceMesher mesher;
    ChunkMesh out;
    std::size_t checked = 0;
    for (std::uint64_t seed : {301u, 302u}) {
      std::mt19937_64 rng(seed);
      auto world = vtp::test::makeWorld();
      const VoxelBox region{{-16, -8, -16}, {16, 8, 16}};
      vtp::test::randomEdits(*world, region, 24, rng);
      const VoxelBox patch{{-3, -3, -3}, {3, 3, 3}};
      std::vector<Voxel> noise(std::size_t(patch.volume()));
      for (auto& v : noise) v = vtp::test::randomVoxel(rng);
      REQUIRE(world->writeRegion(patch, noise).ok());
      const VoxelGrid grid = vtp::test::readGrid(*world, grown(region, 3));
      for (std::int32_t cz = -2; cz < 2; ++cz) {
        for (std::int32_t cy = -1; cy < 1; ++cy) {
          for (std::int32_t cx = -2; cx < 2; ++cx) {
            const auto chunk = vtp::test::fastMeshChunk(mesher, out, grid, {cx, cy, cz}, vtp::mesher::kWideApron);
            for (const auto* part : {&chunk.owned, &chunk.neighbours}) {
              for (const MeshTriangle& t : *part) {
                ++checked;
                if (!vtp::test::withinSolidNeighbourhood(t, grid)) FAIL_CHECK("spills: " << vtp::test::describe(t));
              }
            }
          }
        }
      }
      // The reference states the stronger rule: within the 3^3 voxels of the inside voxel of its own edge.
      std::vector<VoxelCoord> inside;
      const auto reference = vtp::test::referenceMesh(grid, region, &inside);
      for (std::size_t i = 0; i < reference.size(); ++i) {
        const VoxelCoord v = inside[i];
        const std::int32_t lo[3] = {kScale * (v.x - 1), kScale * (v.y - 1), kScale * (v.z - 1)};
        for (const FixedPoint& p : reference[i].v) {
          for (std::size_t a = 0; a < 3; ++a) REQUIRE((p[a] >= lo[a] && p[a] <= lo[a] + 3 * kScale));
        }
      }
    }
    CHECK(checked > 1000);
  }

  SUBCASE("no triangle has zero area and none repeats; slivers are counted") {
    SurfaceMesher mesher;
    ChunkMesh out;
    std::size_t count = 0, slivers = 0, zero = 0, duplicates = 0;
    double min_area = std::numeric_limits<double>::infinity();
    auto tally = [&](const std::vector<MeshTriangle>& tris) {
      duplicates += vtp::test::duplicateCount(tris);
      for (const MeshTriangle& t : tris) {
        const auto c = vtp::test::crossProduct(t);
        if (c[0] == 0 && c[1] == 0 && c[2] == 0) {
          ++zero;
          MESSAGE("zero area: " << vtp::test::describe(t));
        }
        const double area = vtp::test::areaVoxels(t);
        min_area = std::min(min_area, area);
        slivers += area < 1e-4 ? 1 : 0;
        ++count;
      }
    };
    std::mt19937_64 rng(303);
    // Random worlds, chunk by chunk, and raw white-noise boxes.
    for (int w = 0; w < 3; ++w) {
      auto world = vtp::test::makeWorld();
      const VoxelBox region{{-16, -16, -16}, {16, 16, 16}};
      vtp::test::randomEdits(*world, region, 30, rng);
      borderEdits(*world, region, 10, rng);
      tally(meshChunkByChunk(*world, {-2, -2, -2}, {2, 2, 2}, vtp::mesher::kApron));
    }
    for (int i = 0; i < 40; ++i) {
      std::vector<Voxel> box(std::size_t(vtp::mesher::boxVolume(vtp::mesher::kWideApron)));
      for (auto& v : box) v = Voxel{std::uint8_t(rng() % 6), std::uint8_t(rng() % 256)};
      REQUIRE(mesher.mesh(box, vtp::mesher::kWideApron, out).ok());
      tally(vtp::test::worldTriangles(out, {0, 0, 0}, 0, out.triangle_count));
    }
    CHECK(count > 10000);
    CHECK(zero == 0);
    CHECK(duplicates == 0);
    MESSAGE("triangles " << count << ", minimum area " << min_area << " voxel^2, below 1e-4 voxel^2: " << slivers);
  }
}

TEST_CASE("SurfaceMesher: partial layers and gentle slopes mesh at the height their occupancy gives and face out") {
  SurfaceMesher mesher;
  ChunkMesh out;

  SUBCASE("a partial top layer puts the surface at h + q/255 within 0.1 voxel on every vertical line, facing up") {
    // Box voxels y < h at occupancy 255, y = h at occupancy q, air or water above, over the whole 10^3 box.
    const int side = vtp::mesher::boxSide(vtp::mesher::kApron);
    double worst = 0;
    for (int above_water = 0; above_water < 2; ++above_water) {
      for (int h = 1; h <= 7; ++h) {
        for (int q = 0; q < 256; ++q) {
          std::vector<Voxel> box(std::size_t(side * side * side));
          for (int z = 0; z < side; ++z) {
            for (int y = 0; y < side; ++y) {
              for (int x = 0; x < side; ++x) {
                const int cy = y - vtp::mesher::kApron;  // chunk-local y
                Voxel v = above_water ? Voxel{1, 200} : kAir;
                if (cy < h) v = Voxel{2, 255};
                if (cy == h) v = Voxel{4, std::uint8_t(q)};
                box[std::size_t(x + side * (y + side * z))] = v;
              }
            }
          }
          REQUIRE(mesher.mesh(box, vtp::mesher::kApron, out).ok());
          const auto tris = vtp::test::worldTriangles(out, {0, 0, 0}, 0, out.triangle_count);
          REQUIRE(tris.size() == 128);
          const double expected = h + q / 255.0;
          for (int z = 0; z < 8; ++z) {
            for (int x = 0; x < 8; ++x) {
              const auto hits = vtp::test::verticalHits(tris, kScale * x + kScale / 2, kScale * z + kScale / 2);
              REQUIRE(!hits.empty());
              for (double y : hits) {
                worst = std::max(worst, std::abs(y / kScale - expected));
                if (std::abs(y / kScale - expected) > 0.1) {
                  FAIL_CHECK("h " << h << " q " << q << ": surface at " << y / kScale << " at x " << x << " z " << z);
                }
              }
            }
          }
          for (const MeshTriangle& t : tris) CHECK(vtp::test::crossProduct(t)[1] > 0);
        }
      }
    }
    MESSAGE("layer rule: largest deviation from h + q/255 is " << worst << " voxel");
  }

  SUBCASE("a gentle slope written column by column meshes flat, across seams and negative coordinates") {
    // Rock below y = s (x + 0.5 + 0.3 z) - 3 (slope s = tan(angle) along x, gentler along z) over x, z in [-24, 24),
    // each voxel filled to that height at its column's centre. Both ends of an x- or z-edge crossing the plane are
    // then partly filled, and only the linear crossing puts that edge on the plane: with the sum rule there, bumps of
    // 0.03 voxel at 15 degrees. What is left is the occupancy's and the grid's rounding.
    double worst = 0;
    for (const double degrees : {5.0, 15.0, 24.0}) {
      const double s = std::tan(degrees * std::numbers::pi / 180);
      auto height = [&](double x, double z) { return s * (x + 0.3 * z) - 3; };
      auto world = vtp::test::makeWorld();
      const VoxelBox box{{-24, -24, -24}, {24, 24, 24}};
      WriteRegionEdit region{box, {}};
      for (std::int32_t z = box.min.z; z < box.max.z; ++z) {
        for (std::int32_t y = box.min.y; y < box.max.y; ++y) {
          for (std::int32_t x = box.min.x; x < box.max.x; ++x) {
            const double fill = std::clamp(height(x + 0.5, z + 0.5) - y, 0.0, 1.0);
            region.voxels.push_back(fill > 0 ? Voxel{2, std::uint8_t(std::lround(fill * 255))} : kAir);
          }
        }
      }
      REQUIRE(world->apply(region).ok());
      const auto tris = meshChunkByChunk(*world, {-2, -3, -2}, {2, 3, 2}, vtp::mesher::kApron);
      REQUIRE(tris.size() > 1000);
      for (const MeshTriangle& t : tris) {
        for (const FixedPoint& p : t.v) {
          // Vertices of cells at the box's rim see its edge; the slope's interior is what counts.
          if (std::abs(p[0]) > 20 * kScale || std::abs(p[2]) > 20 * kScale) continue;
          const double off = p[1] / double(kScale) - height(p[0] / double(kScale), p[2] / double(kScale));
          worst = std::max(worst, std::abs(off));
        }
      }
    }
    MESSAGE("slopes: largest vertex distance above or below the plane " << worst << " voxel");
    CHECK(worst < 0.005);  // 0.0027 measured
  }

  SUBCASE(
      "normals point out of the solid: a voxel, a sphere and a solid with a cavity have the volume of their solid") {
    // One full voxel at a chunk corner, its faces owned by four chunks: the 341/1024-voxel cube, positive.
    {
      auto world = vtp::test::makeWorld();
      REQUIRE(world->setVoxel({0, 0, 0}, kRock).ok());
      const auto mesh = meshChunkByChunk(*world, {-1, -1, -1}, {1, 1, 1}, vtp::mesher::kApron);
      CHECK(mesh.size() == 12);
      CHECK(vtp::test::signedVolume6(mesh) == 6 * 341 * 341 * 341);
    }
    // A sphere straddling seams: the enclosed volume is within 10% of the ball's.
    const double r = 5.3;
    double sphere_volume = 0;
    {
      auto world = vtp::test::makeWorld();
      REQUIRE(world->fillSphere({0.2, -0.4, 0.1}, r, 3).ok());
      const auto mesh = meshChunkByChunk(*world, {-2, -2, -2}, {2, 2, 2}, vtp::mesher::kApron);
      sphere_volume = double(vtp::test::signedVolume6(mesh)) / 6.0 / std::pow(kScale, 3);
      const double ball = 4.0 / 3.0 * std::numbers::pi * r * r * r;
      CHECK(sphere_volume > 0.9 * ball);
      CHECK(sphere_volume < 1.1 * ball);
    }
    // A box with that sphere cleared out of it: positive, and smaller than the box by about the sphere.
    {
      auto world = vtp::test::makeWorld();
      REQUIRE(world->fillBox({{-12, -12, -12}, {12, 12, 12}}, 2).ok());
      const auto solid = meshChunkByChunk(*world, {-2, -2, -2}, {2, 2, 2}, vtp::mesher::kApron);
      REQUIRE(world->clearSphere({0.2, -0.4, 0.1}, r).ok());
      const auto hollow = meshChunkByChunk(*world, {-2, -2, -2}, {2, 2, 2}, vtp::mesher::kApron);
      const double v_solid = double(vtp::test::signedVolume6(solid)) / 6.0 / std::pow(kScale, 3);
      const double v_hollow = double(vtp::test::signedVolume6(hollow)) / 6.0 / std::pow(kScale, 3);
      CHECK(v_solid > 0.95 * 24 * 24 * 24);
      CHECK(v_hollow > 0);
      CHECK(v_solid - v_hollow == doctest::Approx(sphere_volume).epsilon(0.1));
    }
  }
}
