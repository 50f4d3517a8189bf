// Edge flags against brute force: for every edge of every triangle a chunk's cached collider owns, its neighbour is
// found by vertex position among all triangles meshed from the 12^3 box (the chunk's and its neighbours' within one
// voxel), and the edge must be flagged exactly when it is convex and bends by more than kFlatEdgeAngle. Random worlds
// with negative coordinates and seams; flat ground has no flagged edge, a box's rim has.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <random>

#include "collider/edge_flags.h"
#include "support/random_world.h"
#include "support/standard_worlds.h"
#include "vtp/physics/terrain_physics.h"

using namespace vtp::terrain;
using namespace vtp::physics;
using vtp::mesher::Vertex;

namespace {

using Key = std::array<int, 6>;  // an edge's two end positions
Key edgeKey(const Vertex& a, const Vertex& b) { return {a.x, a.y, a.z, b.x, b.y, b.z}; }

std::array<double, 3> normalOf(const Vertex& a, const Vertex& b, const Vertex& c) {
  const double u[3] = {double(b.x - a.x), double(b.y - a.y), double(b.z - a.z)};
  const double v[3] = {double(c.x - a.x), double(c.y - a.y), double(c.z - a.z)};
  return {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
}

// Flags of every owned triangle of chunk c by brute force, keyed by its corner positions.
std::map<std::array<int, 9>, unsigned> bruteFlags(const World& world, ChunkCoord c) {
  const VoxelCoord o = chunkOrigin(c);
  std::vector<Voxel> box(std::size_t(vtp::mesher::boxVolume(vtp::mesher::kWideApron)));
  REQUIRE(world.readBox({{o.x - 2, o.y - 2, o.z - 2}, {o.x + 10, o.y + 10, o.z + 10}}, box).ok());
  vtp::mesher::SurfaceMesher mesher;
  vtp::mesher::ChunkMesh mesh;
  REQUIRE(mesher.mesh(box, vtp::mesher::kWideApron, mesh).ok());
  auto corner = [&](int t, int k) { return mesh.vertices[mesh.indices[std::size_t(3 * t + k % 3)]]; };
  std::multimap<Key, int> half_edges;  // start, end -> triangle
  for (int t = 0; t < mesh.triangle_count; ++t)
    for (int k = 0; k < 3; ++k) half_edges.emplace(edgeKey(corner(t, k), corner(t, k + 1)), 3 * t + k);
  std::map<std::array<int, 9>, unsigned> out;
  for (int t = 0; t < mesh.owned_triangle_count; ++t) {
    unsigned flags = 0;
    const auto n = normalOf(corner(t, 0), corner(t, 1), corner(t, 2));
    for (int k = 0; k < 3; ++k) {
      const auto [lo, hi] = half_edges.equal_range(edgeKey(corner(t, k + 1), corner(t, k)));
      bool active = true;
      if (std::distance(lo, hi) == 1) {
        const int u = lo->second / 3, j = lo->second % 3;
        const auto m = normalOf(corner(u, 0), corner(u, 1), corner(u, 2));
        const Vertex apex = corner(u, j + 2), a = corner(t, k);
        const double side = (apex.x - a.x) * n[0] + (apex.y - a.y) * n[1] + (apex.z - a.z) * n[2];
        const double cosine = (n[0] * m[0] + n[1] * m[1] + n[2] * m[2]) /
                              std::sqrt((n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) * (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]));
        active = side < 0 && cosine < std::cos(kFlatEdgeAngle);
      }
      if (active) flags |= 1u << k;
    }
    const Vertex p0 = corner(t, 0), p1 = corner(t, 1), p2 = corner(t, 2);
    out[{p0.x, p0.y, p0.z, p1.x, p1.y, p1.z, p2.x, p2.y, p2.z}] = flags;
  }
  return out;
}

// Checks every chunk near a stored one; returns how many edges were flagged.
int checkWorld(World& world) {
  auto physics = TerrainPhysics::create(world);
  REQUIRE(physics.ok());
  int flagged = 0, triangles = 0;
  for (const ChunkCoord c : vtp::test::chunksNearStored(world)) {
    auto pin = (**physics).colliders().acquire(c);
    REQUIRE(pin.ok());
    const Collider& collider = *pin.value();
    const auto want = bruteFlags(world, c);
    REQUIRE(int(want.size()) == collider.triangleCount());
    for (int id = 0; id < collider.triangleCount(); ++id) {
      const ColliderTriangle t = collider.triangle(id);
      const auto& v = t.vertices;
      const auto it = want.find({v[0].x, v[0].y, v[0].z, v[1].x, v[1].y, v[1].z, v[2].x, v[2].y, v[2].z});
      REQUIRE(it != want.end());
      INFO("chunk " << c.x << "," << c.y << "," << c.z << " triangle " << id);
      CHECK(unsigned(t.edge_flags) == it->second);
      flagged += std::popcount(unsigned(t.edge_flags));
      ++triangles;
    }
  }
  CHECK(triangles > 0);
  return flagged;
}

}  // namespace

TEST_CASE("edge flags: flat ground has none, across chunk seams too") {
  auto world = vtp::test::makeWorld();
  REQUIRE(world->fillBox({{-24, -16, -24}, {24, 0, 24}}, 2).ok());
  auto physics = TerrainPhysics::create(*world);
  REQUIRE(physics.ok());
  // The chunks of the surface's middle, away from the slab's rim.
  for (int z = -2; z <= 1; ++z)
    for (int x = -2; x <= 1; ++x)
      for (int y = -1; y <= 0; ++y) {
        auto pin = (**physics).colliders().acquire({x, y, z});
        REQUIRE(pin.ok());
        for (int id = 0; id < pin.value()->triangleCount(); ++id) CHECK(pin.value()->triangle(id).edge_flags == 0);
      }
}

TEST_CASE("edge flags: a block's rim is flagged but not its faces or the ground and brute force agrees") {
  auto world = vtp::test::flatRockWorld(12);
  REQUIRE(world->fillBox({{-3, 0, -5}, {4, 3, 2}}, 3).ok());  // a block straddling chunk seams
  CHECK(checkWorld(*world) > 0);
}

TEST_CASE("edge flags: random worlds match brute force") {
  for (const std::uint64_t seed : {3u, 8u}) {
    auto world = vtp::test::makeWorld();
    std::mt19937_64 rng(seed);
    vtp::test::randomEdits(*world, {{-14, -10, -14}, {10, 10, 10}}, 25, rng);
    CHECK(checkWorld(*world) > 0);
  }
}

namespace {

// Both paths over every chunk near a stored one, meshed with `apron`: the quad path must take the mesher's output and
// give the general path's flags. Returns how many triangles were compared.
int comparePaths(const World& world, int apron) {
  vtp::mesher::SurfaceMesher mesher;
  vtp::mesher::ChunkMesh mesh;
  EdgeFlagScratch scratch;
  std::vector<std::uint8_t> quad(std::size_t(vtp::mesher::kMaxWideTriangles)), general(quad.size());
  std::vector<Voxel> box(std::size_t(vtp::mesher::boxVolume(apron)));
  int compared = 0;
  for (const ChunkCoord c : vtp::test::chunksNearStored(world)) {
    const VoxelCoord o = chunkOrigin(c);
    const int far = kChunkSize + apron;
    REQUIRE(world.readBox({{o.x - apron, o.y - apron, o.z - apron}, {o.x + far, o.y + far, o.z + far}}, box).ok());
    REQUIRE(mesher.mesh(box, apron, mesh).ok());
    INFO("chunk " << c.x << "," << c.y << "," << c.z << " apron " << apron);
    REQUIRE(quadEdgeFlags(mesh, quad, scratch));
    generalEdgeFlags(mesh, general, scratch);
    for (int t = 0; t < mesh.owned_triangle_count; ++t) CHECK(quad[std::size_t(t)] == general[std::size_t(t)]);
    compared += mesh.owned_triangle_count;
  }
  return compared;
}

}  // namespace

TEST_CASE("edge flags: the quad path takes the mesher's output and agrees with the general path") {
  for (const std::uint64_t seed : {5u, 13u}) {
    auto world = vtp::test::makeWorld();
    std::mt19937_64 rng(seed);
    vtp::test::randomEdits(*world, {{-14, -10, -14}, {10, 10, 10}}, 25, rng);
    for (const int apron : {vtp::mesher::kApron, vtp::mesher::kWideApron}) CHECK(comparePaths(*world, apron) > 0);
  }
}

TEST_CASE("edge flags: a mesh without the mesher's structure takes the general path, with the same answers") {
  auto world = vtp::test::flatRockWorld(12);
  REQUIRE(world->fillBox({{-3, 0, -5}, {4, 3, 2}}, 3).ok());
  std::vector<Voxel> box(std::size_t(vtp::mesher::boxVolume(vtp::mesher::kWideApron)));
  REQUIRE(world->readBox({{-2, -2, -2}, {10, 10, 10}}, box).ok());
  vtp::mesher::SurfaceMesher mesher;
  vtp::mesher::ChunkMesh base;
  REQUIRE(mesher.mesh(box, vtp::mesher::kWideApron, base).ok());
  REQUIRE(base.owned_triangle_count >= 4);
  EdgeFlagScratch scratch;
  std::vector<std::uint8_t> flags(std::size_t(vtp::mesher::kMaxWideTriangles)), want(flags.size());
  REQUIRE(quadEdgeFlags(base, flags, scratch));

  // Each change breaks one thing the quad path relies on; the mesh is still a valid mesh, and computeEdgeFlags must
  // answer as the general path does (the general path finds neighbours by vertex, whatever the order).
  auto check = [&](const char* what, vtp::mesher::ChunkMesh mesh) {
    INFO(what);
    CHECK_FALSE(quadEdgeFlags(mesh, flags, scratch));
    generalEdgeFlags(mesh, want, scratch);
    computeEdgeFlags(mesh, flags, scratch);
    for (int t = 0; t < mesh.owned_triangle_count; ++t) CHECK(flags[std::size_t(t)] == want[std::size_t(t)]);
    // The tables are left clear: the unchanged mesh still takes the quad path with the general path's answers.
    REQUIRE(quadEdgeFlags(base, flags, scratch));
    generalEdgeFlags(base, want, scratch);
    for (int t = 0; t < base.owned_triangle_count; ++t) CHECK(flags[std::size_t(t)] == want[std::size_t(t)]);
  };
  {
    vtp::mesher::ChunkMesh m = base;  // a triangle's corners rotated: (b, c, a)
    std::rotate(m.indices.begin(), m.indices.begin() + 1, m.indices.begin() + 3);
    check("rotated corners", m);
  }
  {
    vtp::mesher::ChunkMesh m = base;  // the first two quads' second triangles swapped
    std::swap_ranges(m.indices.begin() + 3, m.indices.begin() + 6, m.indices.begin() + 9);
    check("triangles of two quads swapped", m);
  }
  {
    vtp::mesher::ChunkMesh m = base;  // one owned triangle fewer: an odd count
    m.owned_triangle_count -= 1;
    check("odd owned count", m);
  }
  {
    vtp::mesher::ChunkMesh m = base;  // a vertex moved onto its neighbour, so into its cell
    m.vertices[m.indices[0]] = m.vertices[m.indices[1]];
    check("two vertices in one cell", m);
  }
  {
    vtp::mesher::ChunkMesh m = base;  // the first quad again, as a neighbour's: its diagonal has three triangles
    const std::size_t end = 3 * std::size_t(m.triangle_count);
    REQUIRE(m.indices.size() >= end + 6);
    std::copy(m.indices.begin(), m.indices.begin() + 6, m.indices.begin() + std::ptrdiff_t(end));
    m.materials[std::size_t(m.triangle_count)] = m.materials[std::size_t(m.triangle_count) + 1] = m.materials[0];
    m.triangle_count += 2;
    check("a quad twice", m);
  }
  {
    vtp::mesher::ChunkMesh m = base;  // a vertex outside the box's cells
    m.vertices[m.indices[0]].y = std::int16_t(-3000);
    check("a vertex outside the cells", m);
  }
}
