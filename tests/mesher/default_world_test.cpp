// The fast mesher over the shipped world: every chunk meshes cleanly, the surface of a sizeable region is closed across
// all its seams, and a sample of chunks equals the reference.
#include <doctest/doctest.h>

#include <limits>

#include "mesher/reference_mesher.h"
#include "vtp/mesher/surface_mesher.h"
#include "vtp/terrain/world_file.h"

using namespace vtp::terrain;
using vtp::mesher::ChunkMesh;
using vtp::mesher::SurfaceMesher;
using vtp::test::FixedPoint;
using vtp::test::kScale;
using vtp::test::MeshTriangle;
using vtp::test::VoxelGrid;

namespace {

// Loaded once for the whole suite (the file is validated on load).
const World& defaultWorld() {
  static std::unique_ptr<World> world;
  if (!world) {
    auto loaded = loadWorldFile(VTP_SOURCE_DIR "/data/worlds/default.vtw");
    REQUIRE(loaded.ok());
    world = std::move(loaded->world);
  }
  return *world;
}

// The default world's stored extent (vtp-world info): voxels -128..128, -48..48, -128..128, i.e. chunks -16..15,
// -6..5, -16..15. Chunks one below on each axis can own triangles too (edges up into the world).
constexpr ChunkCoord kFirstChunk{-17, -7, -17};
constexpr ChunkCoord kEndChunk{16, 6, 16};

}  // namespace

TEST_CASE("SurfaceMesher: the default world meshes closed and clean and a sample of chunks matches the reference") {
  const World& world = defaultWorld();
  SurfaceMesher mesher;
  ChunkMesh out;

  SUBCASE("every chunk meshes without zero-area triangles or spill, and the whole surface is closed") {
    std::vector<MeshTriangle> all;
    std::vector<Voxel> box(std::size_t(vtp::mesher::boxVolume(vtp::mesher::kApron)));
    std::size_t chunks_with_triangles = 0, zero_area = 0, spills = 0, spill_checked = 0, slivers = 0;
    double min_area = std::numeric_limits<double>::infinity();
    std::size_t index = 0;
    for (std::int32_t z = kFirstChunk.z; z < kEndChunk.z; ++z) {
      for (std::int32_t y = kFirstChunk.y; y < kEndChunk.y; ++y) {
        for (std::int32_t x = kFirstChunk.x; x < kEndChunk.x; ++x, ++index) {
          const ChunkCoord c{x, y, z};
          const VoxelBox read = vtp::test::apronBox(c, vtp::mesher::kApron);
          REQUIRE(world.readBox(read, box).ok());
          const auto r = mesher.mesh(box, vtp::mesher::kApron, out);
          REQUIRE(r.ok());
          if (*r == 0) continue;
          ++chunks_with_triangles;
          const auto tris = vtp::test::worldTriangles(out, c, 0, out.triangle_count);
          for (const MeshTriangle& t : tris) {
            const auto cr = vtp::test::crossProduct(t);
            zero_area += (cr[0] == 0 && cr[1] == 0 && cr[2] == 0) ? 1 : 0;
            const double area = vtp::test::areaVoxels(t);
            min_area = std::min(min_area, area);
            slivers += area < 1e-4 ? 1 : 0;
          }
          // Spill on every 8th chunk (the check is slow); the box holds every edge's inside voxel.
          if (index % 8 == 0) {
            const VoxelGrid grid{read, box};
            for (const MeshTriangle& t : tris) {
              ++spill_checked;
              spills += vtp::test::withinSolidNeighbourhood(t, grid) ? 0 : 1;
            }
          }
          all.insert(all.end(), tris.begin(), tris.end());
        }
      }
    }
    CHECK(chunks_with_triangles > 1000);
    CHECK(zero_area == 0);
    CHECK(spill_checked > 10000);
    CHECK(spills == 0);
    CHECK(vtp::test::duplicateCount(all) == 0);
    // The world is finite (air outside storage) and every chunk that can own a triangle was meshed: closed.
    const auto census = vtp::test::edgeCensus(all);
    CHECK(census.unmatched == 0);
    CHECK(census.boundary == 0);
    CHECK(vtp::test::signedVolume6(all) > 0);
    MESSAGE("default world: " << chunks_with_triangles << " chunks with triangles, " << all.size() << " triangles, "
                              << census.non_manifold << " non-manifold edges of " << census.checked_edges
                              << ", minimum area " << min_area << " voxel^2, " << slivers << " below 1e-4 voxel^2");
  }

  SUBCASE("a region of 6x13x6 chunks meshed chunk by chunk has no T-junctions and shares every seam vertex") {
    std::vector<MeshTriangle> all;
    std::vector<Voxel> box(std::size_t(vtp::mesher::boxVolume(vtp::mesher::kApron)));
    for (std::int32_t z = -3; z < 3; ++z) {
      for (std::int32_t y = kFirstChunk.y; y < kEndChunk.y; ++y) {
        for (std::int32_t x = -3; x < 3; ++x) {
          REQUIRE(world.readBox(vtp::test::apronBox({x, y, z}, vtp::mesher::kApron), box).ok());
          REQUIRE(mesher.mesh(box, vtp::mesher::kApron, out).ok());
          const auto tris = vtp::test::worldTriangles(out, {x, y, z}, 0, out.triangle_count);
          all.insert(all.end(), tris.begin(), tris.end());
        }
      }
    }
    REQUIRE(all.size() > 1000);
    CHECK(vtp::test::tJunctionCount(all) == 0);
    CHECK(vtp::test::inconsistentCellCount(all) == 0);
    // Closed away from the region's open sides: edges with an end in a cell whose 8 voxels lie inside the region.
    const VoxelBox region{{-24, -56, -24}, {24, 48, 24}};
    const auto interior = [&](const FixedPoint& p) {
      for (std::size_t a = 0; a < 3; ++a) {
        static_assert(kScale == 1 << 10);
        const std::int32_t cell = (p[a] - kScale / 2) >> 10;  // arithmetic shift: floor division
        const std::int32_t lo = a == 0 ? region.min.x : a == 1 ? region.min.y : region.min.z;
        const std::int32_t hi = a == 0 ? region.max.x : a == 1 ? region.max.y : region.max.z;
        if (cell < lo || cell + 1 >= hi) return false;
      }
      return true;
    };
    const auto census = vtp::test::edgeCensus(all, interior);
    CHECK(census.checked_edges > 1000);
    CHECK(census.unmatched == 0);
    CHECK(census.boundary == 0);
  }

  SUBCASE("a sample of chunks equals the reference with both aprons") {
    std::size_t compared = 0, triangles = 0;
    std::size_t index = 0;
    for (std::int32_t z = kFirstChunk.z; z < kEndChunk.z; ++z) {
      for (std::int32_t y = kFirstChunk.y; y < kEndChunk.y; ++y) {
        for (std::int32_t x = kFirstChunk.x; x < kEndChunk.x; ++x, ++index) {
          // Every 31st chunk (31 is prime to the row lengths 33 and 13, so the sample moves through the world).
          if (index % 31 != 0) continue;
          const ChunkCoord c{x, y, z};
          const VoxelGrid grid = vtp::test::readGrid(world, vtp::test::apronBox(c, vtp::mesher::kWideApron));
          const auto reference = vtp::test::canonicalSorted(vtp::test::referenceMesh(grid, chunkBox(c)));
          const auto ring =
              vtp::test::canonicalSorted(vtp::test::referenceMeshRing(grid, vtp::test::apronBox(c, 1), chunkBox(c)));
          const auto narrow = vtp::test::fastMeshChunk(mesher, out, grid, c, vtp::mesher::kApron);
          CHECK(vtp::test::canonicalSorted(narrow.owned) == reference);
          const auto wide = vtp::test::fastMeshChunk(mesher, out, grid, c, vtp::mesher::kWideApron);
          CHECK(vtp::test::canonicalSorted(wide.owned) == reference);
          CHECK(vtp::test::canonicalSorted(wide.neighbours) == ring);
          ++compared;
          triangles += reference.size();
        }
      }
    }
    CHECK(compared > 400);
    CHECK(triangles > 5000);
    MESSAGE("default world: " << compared << " chunks compared with the reference, " << triangles << " triangles");
  }
}
