// MaskIndex against brute force: conservative against the mesher's triangles and the water voxels (exact
// triangle/box overlap), precise away from the surface, current after any edit sequence (equal to a fresh index and to
// the 27-neighbour reference), query() equal to a chunk-by-chunk evaluation on both the range and the index-walk path;
// voxel sizes other than 1, negative coordinates, chunk seams and corners, cave ceilings owned by unstored chunks;
// rejected input; and queries running while another thread edits.
#include "vtp/physics/mask_index.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "physics/mask_reference.h"
#include "broadphase/query_range.h"  // white-box: the query's conversion to voxels
#include "support/materials.h"
#include "support/random_world.h"
#include "vtp/mesher/surface_mesher.h"

using namespace vtp::terrain;
using vtp::physics::Aabb;
using vtp::physics::ChunkMasks;
using vtp::physics::ChunkTouch;
using vtp::physics::MaskIndex;
using vtp::physics::MaskIndexOptions;
using vtp::physics::MaskTag;
using vtp::test::kDirtId;
using vtp::test::kRock;
using vtp::test::kRockId;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using P3 = std::array<double, 3>;

double axis(const vtp::physics::WorldVec3& v, int i) { return v[std::size_t(i)]; }
std::int32_t axis(const VoxelCoord& v, int i) { return i == 0 ? v.x : (i == 1 ? v.y : v.z); }
std::int32_t axis(const ChunkCoord& c, int i) { return i == 0 ? c.x : (i == 1 ? c.y : c.z); }

std::string str(const Aabb& b) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "[%.17g,%.17g,%.17g]..[%.17g,%.17g,%.17g]", b.min.x, b.min.y, b.min.z, b.max.x,
                b.max.y, b.max.z);
  return buf;
}
std::string str(ChunkCoord c) {
  return "(" + std::to_string(c.x) + "," + std::to_string(c.y) + "," + std::to_string(c.z) + ")";
}
std::string str(const ChunkTouch& t) {
  return str(t.chunk) + (t.solid ? " solid" : "") + (t.water ? " water" : "") + " " + vtp::test::tagName(t.tag);
}
std::string str(const std::vector<ChunkTouch>& v) {
  std::string s = std::to_string(v.size()) + " chunk(s):";
  for (std::size_t i = 0; i < std::min<std::size_t>(v.size(), 12); ++i) s += " " + str(v[i]) + ";";
  return v.size() > 12 ? s + " ..." : s;
}

bool sameTouch(const ChunkTouch& a, const ChunkTouch& b) {
  return a.chunk == b.chunk && a.solid == b.solid && a.water == b.water && a.tag == b.tag;
}
bool sameTouches(const std::vector<ChunkTouch>& a, const std::vector<ChunkTouch>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), sameTouch);
}

std::unique_ptr<World> makeWorld(double voxel_size) {
  WorldConfig config;
  config.voxel_size = voxel_size;
  return vtp::test::makeWorld(std::move(config));
}

std::unique_ptr<MaskIndex> makeIndex(World& world, MaskIndexOptions options = {}) {
  auto index = MaskIndex::create(world, options);
  REQUIRE(index.ok());
  return std::move(index.value());
}

// A box given in voxels, scaled to world units.
Aabb worldBox(P3 lo, P3 hi, double voxel_size) {
  return {{lo[0] * voxel_size, lo[1] * voxel_size, lo[2] * voxel_size},
          {hi[0] * voxel_size, hi[1] * voxel_size, hi[2] * voxel_size}};
}

using vtp::test::chunksNearStored;

// --- Brute-force oracle for query() -------------------------------------------------------------------------------

// The reference index: 27-neighbour masks of every chunk near a stored one whose box is not empty, in (z, y, x) order.
using ReferenceIndex = std::map<ChunkCoord, ChunkMasks>;

ReferenceIndex referenceIndex(const World& world) {
  ReferenceIndex index;
  for (const ChunkCoord c : chunksNearStored(world)) {
    const ChunkMasks m = vtp::test::referenceMasks(vtp::test::readMaskBox(world, c));
    if (m.tag != MaskTag::kEmpty) index.emplace(c, m);
  }
  return index;
}

// mayOwnTriangles() by definition: a MIXED chunk with a solid bit.
bool ownsTriangles(const ChunkMasks& m) {
  if (m.tag != MaskTag::kMixed) return false;
  for (const std::uint64_t w : m.solid)
    if (w != 0) return true;
  return false;
}

// mayHoldWater() by definition: FULL water, or a MIXED chunk with a water bit.
bool holdsWater(const ChunkMasks& m) {
  if (m.tag == MaskTag::kFullWater) return true;
  if (m.tag != MaskTag::kMixed) return false;
  for (const std::uint64_t w : m.water)
    if (w != 0) return true;
  return false;
}

// mayOwnTriangles() and mayHoldWater() on every reference entry, its 26 neighbours and a far chunk: the fast path on
// the grid, outside it, and the hash table's when there is no grid.
void checkOwners(const MaskIndex& index, const ReferenceIndex& reference, const std::string& what) {
  int wrong = 0, owners = 0, wrong_water = 0, wet = 0;
  for (const auto& [c, m] : reference)
    for (int d = 0; d < 27; ++d) {
      const ChunkCoord n{c.x + d % 3 - 1, c.y + d / 3 % 3 - 1, c.z + d / 9 - 1};
      const auto it = reference.find(n);
      const bool want = it != reference.end() && ownsTriangles(it->second);
      owners += want ? 1 : 0;
      wrong += index.mayOwnTriangles(n) != want ? 1 : 0;
      const bool want_water = it != reference.end() && holdsWater(it->second);
      wet += want_water ? 1 : 0;
      wrong_water += index.mayHoldWater(n) != want_water ? 1 : 0;
    }
  CHECK_MESSAGE(wrong == 0, what);
  CHECK_MESSAGE(owners > 0, what);
  CHECK_MESSAGE(wrong_water == 0, what);
  CHECK_MESSAGE(wet > 0, what);
  CHECK_MESSAGE(!index.mayOwnTriangles({100000, -100000, 5}), what);
  CHECK_MESSAGE(!index.mayHoldWater({100000, -100000, 5}), what);
}

// query() by definition: grow the box by one voxel, take the voxels whose centres lie in it (closed), and per chunk:
// FULL tags answer by themselves, MIXED chunks look at the dilated bits of those voxels.
std::vector<ChunkTouch> bruteQuery(const ReferenceIndex& index, const Aabb& box, double voxel_size) {
  std::array<double, 3> first{}, last{};  // voxel range (inclusive)
  for (int i = 0; i < 3; ++i) {
    const double lo = axis(box.min, i) / voxel_size - 1.0, hi = axis(box.max, i) / voxel_size + 1.0;
    first[std::size_t(i)] = std::ceil(lo - 0.5);
    last[std::size_t(i)] = std::floor(hi - 0.5);
  }
  std::vector<ChunkTouch> out;
  for (const auto& [c, m] : index) {
    std::array<int, 3> a{}, b{};  // chunk-relative voxel range (inclusive)
    bool in_range = true;
    for (int i = 0; i < 3; ++i) {
      const double o = 8.0 * axis(c, i);
      const double from = std::max(first[std::size_t(i)], o), to = std::min(last[std::size_t(i)], o + 7.0);
      in_range = in_range && from <= to;
      a[std::size_t(i)] = int(from - o);
      b[std::size_t(i)] = int(to - o);
    }
    if (!in_range) continue;
    ChunkTouch t{c, m.tag == MaskTag::kFullSolid, m.tag == MaskTag::kFullWater, m.tag};
    if (m.tag == MaskTag::kMixed) {
      for (int z = a[2]; z <= b[2]; ++z) {
        for (int y = a[1]; y <= b[1]; ++y) {
          for (int x = a[0]; x <= b[0]; ++x) {
            t.solid = t.solid || vtp::test::maskBit(m.solid, x, y, z);
            t.water = t.water || vtp::test::maskBit(m.water, x, y, z);
          }
        }
      }
    }
    if (t.solid || t.water) out.push_back(t);
  }
  return out;
}

// Sorted by (z, y, x), each chunk once, every entry touching something.
void checkWellFormed(const std::vector<ChunkTouch>& touches, const std::string& what) {
  for (std::size_t i = 0; i < touches.size(); ++i) {
    CHECK_MESSAGE((touches[i].solid || touches[i].water), what << ": " << str(touches[i]) << " touches nothing");
    if (i > 0) CHECK_MESSAGE(touches[i - 1].chunk < touches[i].chunk, what << ": not sorted and unique: " << str(touches));
  }
}

// --- Geometry oracle: the mesher's owned triangles and the water voxels, in world units ---------------------------

struct Triangle {
  std::array<P3, 3> v;
  P3 lo, hi;  // bounding box
};

struct ChunkGeometry {
  ChunkCoord chunk;
  std::vector<Triangle> triangles;  ///< The chunk's owned triangles. [Unit: world]
  std::vector<VoxelCoord> water;    ///< The chunk's water voxels.
  P3 lo{kInf, kInf, kInf}, hi{-kInf, -kInf, -kInf};  ///< Bounds of both. [Unit: world]
};

struct WorldGeometry {
  std::vector<ChunkGeometry> chunks;
  std::size_t triangles = 0, water_voxels = 0;
  std::size_t unstored_chunks_with_triangles = 0;
};

WorldGeometry meshWorld(const World& world) {
  const double s = world.voxelSize();
  vtp::mesher::SurfaceMesher mesher;
  vtp::mesher::ChunkMesh mesh;
  WorldGeometry geometry;
  const auto guard = world.read();
  for (const ChunkCoord c : chunksNearStored(world)) {
    const auto box = vtp::test::readMaskBox(world, c);
    auto count = mesher.mesh(box, vtp::mesher::kApron, mesh);
    REQUIRE(count.ok());
    REQUIRE(mesh.owned_triangle_count == mesh.triangle_count);
    const VoxelCoord o = chunkOrigin(c);
    ChunkGeometry g;
    g.chunk = c;
    auto grow = [&](const P3& lo, const P3& hi) {
      for (std::size_t i = 0; i < 3; ++i) {
        g.lo[i] = std::min(g.lo[i], lo[i]);
        g.hi[i] = std::max(g.hi[i], hi[i]);
      }
    };
    for (int t = 0; t < mesh.triangle_count; ++t) {
      Triangle tri{};
      for (int k = 0; k < 3; ++k) {
        const auto& v = mesh.vertices[mesh.indices[std::size_t(3 * t + k)]];
        constexpr double kGrid = vtp::mesher::kPositionScale;
        tri.v[std::size_t(k)] = {(o.x + v.x / kGrid) * s, (o.y + v.y / kGrid) * s, (o.z + v.z / kGrid) * s};
      }
      for (std::size_t i = 0; i < 3; ++i) {
        tri.lo[i] = std::min({tri.v[0][i], tri.v[1][i], tri.v[2][i]});
        tri.hi[i] = std::max({tri.v[0][i], tri.v[1][i], tri.v[2][i]});
      }
      grow(tri.lo, tri.hi);
      g.triangles.push_back(tri);
    }
    for (int z = 0; z < 8; ++z) {
      for (int y = 0; y < 8; ++y) {
        for (int x = 0; x < 8; ++x) {
          if (!isWater(box[std::size_t(vtp::test::maskBoxIndex(x + 1, y + 1, z + 1))])) continue;
          const VoxelCoord v{o.x + x, o.y + y, o.z + z};
          g.water.push_back(v);
          grow({v.x * s, v.y * s, v.z * s}, {(v.x + 1) * s, (v.y + 1) * s, (v.z + 1) * s});
        }
      }
    }
    if (g.triangles.empty() && g.water.empty()) continue;
    geometry.triangles += g.triangles.size();
    geometry.water_voxels += g.water.size();
    if (!g.triangles.empty() && world.chunk(guard, c) == nullptr) ++geometry.unstored_chunks_with_triangles;
    geometry.chunks.push_back(std::move(g));
  }
  return geometry;
}

double dot(const P3& a, const P3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
P3 cross(const P3& a, const P3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
P3 sub(const P3& a, const P3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }

// Closed triangle/box overlap by the separating axis theorem (Akenine-Moller, "Fast 3D triangle-box overlap testing",
// 2001): the 3 box axes, the triangle normal and the 9 edge cross products. Touching counts; a hair of tolerance
// (1e-9 voxel, far below the mesher's 1/1024-voxel grid) makes rounding err towards "overlaps", which only
// makes the conservative test stricter.
bool triangleTouchesBox(const Triangle& t, const Aabb& b, double voxel_size) {
  const double eps = 1e-9 * voxel_size;
  for (int i = 0; i < 3; ++i) {
    if (t.lo[std::size_t(i)] > axis(b.max, i) + eps || t.hi[std::size_t(i)] < axis(b.min, i) - eps) return false;
  }
  const P3 c{(b.min.x + b.max.x) / 2, (b.min.y + b.max.y) / 2, (b.min.z + b.max.z) / 2};
  const P3 h{(b.max.x - b.min.x) / 2, (b.max.y - b.min.y) / 2, (b.max.z - b.min.z) / 2};
  const std::array<P3, 3> v{sub(t.v[0], c), sub(t.v[1], c), sub(t.v[2], c)};
  auto separates = [&](const P3& a) {
    const double p0 = dot(a, v[0]), p1 = dot(a, v[1]), p2 = dot(a, v[2]);
    const double r = h[0] * std::abs(a[0]) + h[1] * std::abs(a[1]) + h[2] * std::abs(a[2]);
    const double slack = eps * (std::abs(a[0]) + std::abs(a[1]) + std::abs(a[2]));
    return std::min({p0, p1, p2}) > r + slack || std::max({p0, p1, p2}) < -r - slack;
  };
  const std::array<P3, 3> e{sub(v[1], v[0]), sub(v[2], v[1]), sub(v[0], v[2])};
  if (separates(cross(e[0], e[1]))) return false;
  const std::array<P3, 3> unit{P3{1, 0, 0}, P3{0, 1, 0}, P3{0, 0, 1}};
  for (const P3& u : unit) {
    for (const P3& edge : e) {
      if (separates(cross(u, edge))) return false;
    }
  }
  return true;
}

bool boxesTouch(const P3& lo, const P3& hi, const Aabb& b) {
  for (int i = 0; i < 3; ++i) {
    if (lo[std::size_t(i)] > axis(b.max, i) || hi[std::size_t(i)] < axis(b.min, i)) return false;
  }
  return true;
}

// --- Worlds ------------------------------------------------------------------------------------------------------

// Random fills and clears around the origin (negative coordinates and every seam), a box straddling the origin's
// chunk corner, a water pool on a floor and a rock sphere centred on a chunk corner.
void buildRandomWorld(World& world, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  vtp::test::randomEdits(world, {{-20, -14, -20}, {20, 14, 20}}, 30, rng);
  REQUIRE(world.fillBox({{-3, -2, -5}, {5, 3, 2}}, kDirtId).ok());
  REQUIRE(world.fillBox({{-14, -20, 6}, {2, -16, 20}}, kRockId).ok());
  REQUIRE(world.fillBox({{-13, -16, 7}, {1, -13, 19}}, kWaterMaterial).ok());
  REQUIRE(world.fillSphere({16.0, 8.0, -8.0}, 3.5, kRockId).ok());
  REQUIRE(world.fillSphere({-8.0, 16.0, 8.0}, 2.25, kWaterMaterial).ok());
}

// A cave: a rock ceiling at y 8..15 and walls at x 8..15 and z -16..-9 over all-air chunks (y 0 and below, stored
// nothing), so unstored chunks own the ceiling's and the walls' triangles; dents and partial voxels make it uneven.
void buildCaveWorld(World& world) {
  REQUIRE(world.fillBox({{-16, 8, -16}, {16, 16, 16}}, kRockId).ok());
  REQUIRE(world.fillBox({{8, -8, -16}, {16, 8, 16}}, kRockId).ok());
  REQUIRE(world.fillBox({{-16, -8, -16}, {8, 8, -8}}, kRockId).ok());
  REQUIRE(world.clearSphere({-4.0, 8.0, 3.0}, 2.5).ok());
  REQUIRE(world.clearSphere({2.3, 8.4, -3.1}, 1.7).ok());
  REQUIRE(world.setVoxel({0, 7, 0}, Voxel{kDirtId, 200}).ok());
  REQUIRE(world.setVoxel({1, 7, 0}, Voxel{kDirtId, 128}).ok());
  REQUIRE(world.setVoxel({2, 7, 0}, Voxel{kDirtId, 127}).ok());  // outside: no triangle
  REQUIRE(world.setVoxel({-1, 7, -1}, Voxel{kWaterMaterial, 1}).ok());
  REQUIRE(world.clearBox({{-16, 12, -16}, {16, 16, 16}}).ok());
}

// --- Query boxes -------------------------------------------------------------------------------------------------

// Random query boxes of many kinds, in world units. `geometry` supplies triangles and water voxels to aim at.
class BoxMaker {
 public:
  BoxMaker(std::uint64_t seed, double voxel_size, const WorldGeometry& geometry, VoxelBox region)
      : m_rng(seed), m_s(voxel_size), m_geometry(geometry), m_region(region) {}

  Aabb next() {
    const int kind = int(m_rng() % 12);
    switch (kind) {
      case 0: return around(pointOnTriangle(), uniform(0.0, 0.01));      // tiny, on a triangle
      case 1: return around(pointOnTriangle(), uniform(0.5, 3.0));       // body-sized, on a triangle
      case 2: return touchingVertex();                                   // a corner exactly on a vertex
      case 3: return touchingTriangleBounds();                           // a face exactly on a triangle's bounds
      case 4: return around(randomPoint(), uniform(0.5, 3.0));           // body-sized anywhere
      case 5: return aligned(randomPoint(), 1.0);                        // faces on voxel boundaries
      case 6: return aligned(randomPoint(), 0.5);                        // faces on voxel centres
      case 7: return chunkCorner();                                      // straddling a chunk corner
      case 8: return huge();
      case 9: return touchingWater();
      case 10: return around(pointOnTriangle(), 0.0);                    // a point
      default: return around(randomPoint(), uniform(0.0, 8.0));
    }
  }

 private:
  double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(m_rng); }

  // A point in voxels.
  P3 randomPoint() {
    return {uniform(m_region.min.x - 4, m_region.max.x + 4), uniform(m_region.min.y - 4, m_region.max.y + 4),
            uniform(m_region.min.z - 4, m_region.max.z + 4)};
  }
  const Triangle* randomTriangle() {
    if (m_geometry.triangles == 0) return nullptr;
    for (;;) {
      const auto& chunk = m_geometry.chunks[m_rng() % m_geometry.chunks.size()];
      if (!chunk.triangles.empty()) return &chunk.triangles[m_rng() % chunk.triangles.size()];
    }
  }
  // A point on a random triangle, in voxels.
  P3 pointOnTriangle() {
    const Triangle* t = randomTriangle();
    if (t == nullptr) return randomPoint();
    double a = uniform(0, 1), b = uniform(0, 1);
    if (a + b > 1) a = 1 - a, b = 1 - b;
    P3 p{};
    for (std::size_t i = 0; i < 3; ++i) {
      p[i] = (t->v[0][i] + a * (t->v[1][i] - t->v[0][i]) + b * (t->v[2][i] - t->v[0][i])) / m_s;
    }
    return p;
  }
  // A box of side `size` voxels holding p somewhere inside.
  Aabb around(const P3& p, double size) {
    P3 lo{}, hi{};
    for (std::size_t i = 0; i < 3; ++i) {
      const double side = size * uniform(0.5, 1.0), f = uniform(0, 1);
      lo[i] = p[i] - f * side;
      hi[i] = lo[i] + side;
      if (hi[i] < p[i]) hi[i] = p[i];
    }
    return worldBox(lo, hi, m_s);
  }
  Aabb aligned(const P3& p, double step) {
    P3 lo{}, hi{};
    for (std::size_t i = 0; i < 3; ++i) {
      lo[i] = std::floor(p[i] / step) * step;
      hi[i] = lo[i] + step * double(m_rng() % 7);
    }
    return worldBox(lo, hi, m_s);
  }
  // In world units: one box corner exactly on a triangle's vertex, the box in a random octant from it.
  Aabb touchingVertex() {
    const Triangle* t = randomTriangle();
    if (t == nullptr) return huge();
    const P3 v = t->v[m_rng() % 3];
    Aabb b{};
    for (int i = 0; i < 3; ++i) {
      const double side = uniform(0.0, 3.0) * m_s;
      const bool below = m_rng() % 2 == 0;
      const double lo = below ? v[std::size_t(i)] - side : v[std::size_t(i)];
      const double hi = below ? v[std::size_t(i)] : v[std::size_t(i)] + side;
      (i == 0 ? b.min.x : i == 1 ? b.min.y : b.min.z) = lo;
      (i == 0 ? b.max.x : i == 1 ? b.max.y : b.max.z) = hi;
    }
    return b;
  }
  // In world units: a box covering a triangle's bounds on two axes and starting exactly at its bounds on the third.
  Aabb touchingTriangleBounds() {
    const Triangle* t = randomTriangle();
    if (t == nullptr) return huge();
    const int face = int(m_rng() % 3);
    const bool above = m_rng() % 2 == 0;
    Aabb b{};
    for (int i = 0; i < 3; ++i) {
      double lo = t->lo[std::size_t(i)] - uniform(0.0, 1.0) * m_s, hi = t->hi[std::size_t(i)] + uniform(0.0, 1.0) * m_s;
      if (i == face) {
        lo = above ? t->hi[std::size_t(i)] : t->lo[std::size_t(i)] - uniform(0.0, 2.0) * m_s;
        hi = above ? t->hi[std::size_t(i)] + uniform(0.0, 2.0) * m_s : t->lo[std::size_t(i)];
      }
      (i == 0 ? b.min.x : i == 1 ? b.min.y : b.min.z) = lo;
      (i == 0 ? b.max.x : i == 1 ? b.max.y : b.max.z) = hi;
    }
    return b;
  }
  // In voxels: a box whose face lies exactly on a water voxel's face (outside it) or which holds a corner of it.
  Aabb touchingWater() {
    if (m_geometry.water_voxels == 0) return chunkCorner();
    const ChunkGeometry* chunk = nullptr;
    while (chunk == nullptr || chunk->water.empty()) chunk = &m_geometry.chunks[m_rng() % m_geometry.chunks.size()];
    const VoxelCoord w = chunk->water[m_rng() % chunk->water.size()];
    P3 lo{}, hi{};
    const int face = int(m_rng() % 3);
    for (int i = 0; i < 3; ++i) {
      const double v = axis(w, i);
      lo[std::size_t(i)] = v + uniform(-1.0, 0.9);
      hi[std::size_t(i)] = lo[std::size_t(i)] + uniform(0.0, 1.5);
      if (i == face) {
        const bool above = m_rng() % 2 == 0;
        lo[std::size_t(i)] = above ? v + 1 : v - uniform(0.0, 2.0);
        hi[std::size_t(i)] = above ? v + 1 + uniform(0.0, 2.0) : v;
      }
    }
    return worldBox(lo, hi, m_s);
  }
  Aabb chunkCorner() {
    P3 lo{}, hi{};
    for (std::size_t i = 0; i < 3; ++i) {
      const double corner = 8.0 * std::floor(uniform(-3, 3)) + (m_rng() % 2 ? 0.0 : uniform(-0.01, 0.01));
      lo[i] = corner - uniform(0.0, 2.0);
      hi[i] = corner + uniform(0.0, 2.0);
    }
    return worldBox(lo, hi, m_s);
  }
  Aabb huge() {
    P3 lo{}, hi{};
    for (std::size_t i = 0; i < 3; ++i) {
      lo[i] = uniform(-60, 0);
      hi[i] = uniform(0, 60);
    }
    return worldBox(lo, hi, m_s);
  }

  std::mt19937_64 m_rng;
  double m_s;
  const WorldGeometry& m_geometry;
  VoxelBox m_region;
};

// Each query box against every owned triangle and water voxel: a touched chunk must be reported with solid / water.
struct ConservativeCounts {
  std::size_t solid_hits = 0, water_hits = 0;
};

ConservativeCounts checkConservative(const MaskIndex& index, const WorldGeometry& geometry, const Aabb& box,
                                     double voxel_size, const std::string& what) {
  ConservativeCounts counts;
  std::vector<ChunkTouch> out;
  REQUIRE(index.query(box, out).ok());
  for (const ChunkGeometry& g : geometry.chunks) {
    if (!boxesTouch(g.lo, g.hi, box)) continue;
    const auto found = std::find_if(out.begin(), out.end(), [&](const ChunkTouch& t) { return t.chunk == g.chunk; });
    const bool solid = found != out.end() && found->solid, water = found != out.end() && found->water;
    for (const Triangle& t : g.triangles) {
      if (!triangleTouchesBox(t, box, voxel_size)) continue;
      ++counts.solid_hits;
      if (!solid) {
        FAIL_CHECK(what << ": box " << str(box) << " touches triangle (" << t.v[0][0] << "," << t.v[0][1] << ","
                        << t.v[0][2] << ") (" << t.v[1][0] << "," << t.v[1][1] << "," << t.v[1][2] << ") ("
                        << t.v[2][0] << "," << t.v[2][1] << "," << t.v[2][2] << ") of chunk " << str(g.chunk)
                        << " but the query says " << str(out));
      }
      break;
    }
    for (const VoxelCoord w : g.water) {
      const double s = voxel_size;
      if (!boxesTouch({w.x * s, w.y * s, w.z * s}, {(w.x + 1) * s, (w.y + 1) * s, (w.z + 1) * s}, box)) continue;
      ++counts.water_hits;
      if (!water) {
        FAIL_CHECK(what << ": box " << str(box) << " touches water voxel (" << w.x << "," << w.y << "," << w.z
                        << ") of chunk " << str(g.chunk) << " but the query says " << str(out));
      }
      break;
    }
  }
  return counts;
}

// Checks every chunk of `chunks` (masks and tags) against the reference and buildChunkMasks, and the whole index
// against a fresh one; `all_nonempty` is how many chunks of the world have a non-empty box (they all lie in `chunks`).
void checkIndexCurrent(World& world, const MaskIndex& index, const std::vector<ChunkCoord>& chunks,
                       const std::string& what) {
  const auto fresh = makeIndex(world);
  vtp::physics::MaskIndexStats expected;
  for (const ChunkCoord c : chunks) {
    const auto box = vtp::test::readMaskBox(world, c);
    const ChunkMasks reference = vtp::test::referenceMasks(box);
    auto built = vtp::physics::buildChunkMasks(box);
    REQUIRE(built.ok());
    const ChunkMasks got = index.masks(c);
    if (got != reference || *built != reference || fresh->masks(c) != reference) {
      FAIL_CHECK(what << ": chunk " << str(c) << "\n  index:     " << vtp::test::describe(got)
                      << "\n  fresh:     " << vtp::test::describe(fresh->masks(c))
                      << "\n  built:     " << vtp::test::describe(*built)
                      << "\n  reference: " << vtp::test::describe(reference));
    }
    expected.entries += reference.tag != MaskTag::kEmpty ? 1 : 0;
    expected.mixed += reference.tag == MaskTag::kMixed ? 1 : 0;
    expected.full_solid += reference.tag == MaskTag::kFullSolid ? 1 : 0;
    expected.full_water += reference.tag == MaskTag::kFullWater ? 1 : 0;
  }
  const auto stats = index.stats(), fresh_stats = fresh->stats();
  INFO(what);
  CHECK(stats.entries == expected.entries);
  CHECK(stats.mixed == expected.mixed);
  CHECK(stats.full_solid == expected.full_solid);
  CHECK(stats.full_water == expected.full_water);
  CHECK(fresh_stats.entries == expected.entries);
  CHECK(fresh_stats.mixed == expected.mixed);
  CHECK(fresh_stats.full_solid == expected.full_solid);
  CHECK(fresh_stats.full_water == expected.full_water);
  CHECK(stats.mask_bytes == fresh_stats.mask_bytes);
  CHECK(stats.mask_bytes <= 2 * 64 * expected.mixed);  // at most 2 bits per voxel of a MIXED chunk
  if (expected.mixed > 0) CHECK(stats.mask_bytes > 0);
  if (expected.entries > 0) CHECK(stats.index_bytes > 0);
}

// Chunks -R..R-1 on every axis, (z, y, x) order.
std::vector<ChunkCoord> chunkCube(int r) {
  std::vector<ChunkCoord> out;
  for (int z = -r; z < r; ++z) {
    for (int y = -r; y < r; ++y) {
      for (int x = -r; x < r; ++x) out.push_back({x, y, z});
    }
  }
  return out;
}

// Chunks whose 10^3 box intersects a voxel box.
std::vector<ChunkCoord> chunksSeeing(const VoxelBox& b) {
  std::vector<ChunkCoord> out;
  if (b.empty()) return out;
  const ChunkCoord lo = chunkOf({b.min.x - 1, b.min.y - 1, b.min.z - 1}), hi = chunkOf({b.max.x, b.max.y, b.max.z});
  for (int z = lo.z; z <= hi.z; ++z) {
    for (int y = lo.y; y <= hi.y; ++y) {
      for (int x = lo.x; x <= hi.x; ++x) out.push_back({x, y, z});
    }
  }
  return out;
}

}  // namespace

TEST_CASE("MaskIndex: every chunk whose owned triangle or water voxel a box touches is reported") {
  struct Case {
    const char* name;
    double voxel_size;
    std::uint64_t seed;
    bool cave;
  };
  const Case cases[] = {{"random world", 1.0, 11, false},       {"random world, voxel size 0.5", 0.5, 12, false},
                        {"random world, voxel size 0.7", 0.7, 13, false}, {"random world, voxel size 2", 2.0, 14, false},
                        {"cave", 1.0, 15, true},                 {"cave, voxel size 0.25", 0.25, 16, true}};
  for (const Case& c : cases) {
    SUBCASE((std::string("every chunk whose owned triangle or water voxel a box touches is reported solid or water: ") +
             c.name).c_str()) {
      auto world = makeWorld(c.voxel_size);
      if (c.cave) {
        buildCaveWorld(*world);
      } else {
        buildRandomWorld(*world, c.seed);
      }
      const WorldGeometry geometry = meshWorld(*world);
      REQUIRE(geometry.triangles > 500);
      if (c.cave) {
        // The point of the cave: its ceiling's and walls' triangles belong to chunks that store nothing.
        REQUIRE(geometry.unstored_chunks_with_triangles >= 8);
        REQUIRE(world->chunk(world->read(), {-2, 0, 1}) == nullptr);
      } else {
        REQUIRE(geometry.water_voxels > 100);
      }
      const auto index = makeIndex(*world);
      const auto walking = makeIndex(*world, {1});  // every query walks the index
      BoxMaker boxes(c.seed * 7919, c.voxel_size, geometry, {{-20, -20, -20}, {20, 20, 20}});
      ConservativeCounts total;
      for (int i = 0; i < 1500; ++i) {
        const Aabb box = boxes.next();
        const auto counts = checkConservative(*index, geometry, box, c.voxel_size, std::string(c.name) + " #" +
                                                                                       std::to_string(i));
        if (i % 4 == 0) checkConservative(*walking, geometry, box, c.voxel_size, std::string(c.name) + " walk");
        total.solid_hits += counts.solid_hits;
        total.water_hits += counts.water_hits;
      }
      // The boxes really meet the geometry often, so the test can fail.
      CHECK(total.solid_hits > 1000);
      if (!c.cave) CHECK(total.water_hits > 100);
    }
  }

  SUBCASE("a box touching only a cave ceiling's lowest point is reported for the all-air chunk that owns it") {
    auto world = makeWorld(1.0);
    REQUIRE(world->fillBox({{0, 8, 0}, {8, 16, 8}}, kRockId).ok());  // chunk (0,1,0) full rock, (0,0,0) air
    const auto index = makeIndex(*world);
    std::vector<ChunkTouch> out;
    // The ceiling's triangles lie at y = 8 exactly (t = 127.5/255 from voxel centre 8.5); the box ends there.
    REQUIRE(index->query({{3.2, 6.0, 3.7}, {3.4, 8.0, 3.9}}, out).ok());
    const auto found = std::find_if(out.begin(), out.end(), [](const ChunkTouch& t) { return t.chunk == ChunkCoord{0, 0, 0}; });
    REQUIRE_MESSAGE(found != out.end(), str(out));
    CHECK(found->solid);
    CHECK(world->chunk(world->read(), {0, 0, 0}) == nullptr);
  }
}

TEST_CASE("MaskIndex: a box is reported only within the documented reach of a solid-inside or water voxel") {
  for (const double voxel_size : {1.0, 0.5, 0.7}) {
    SUBCASE((std::string("a box more than 2 voxels from every solid-inside (water) voxel along some axis is not reported "
                         "solid (water), voxel size ") + std::to_string(voxel_size)).c_str()) {
      auto world = makeWorld(voxel_size);
      buildCaveWorld(*world);
      buildRandomWorld(*world, 21);
      const auto index = makeIndex(*world);
      const auto walking = makeIndex(*world, {1});
      std::mt19937_64 rng(0x707265636973ull);
      std::size_t airborne_solid = 0, airborne_water = 0;
      std::vector<ChunkTouch> out;
      for (int i = 0; i < 6000; ++i) {
        auto uniform = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
        P3 lo{}, hi{};
        for (std::size_t a = 0; a < 3; ++a) {
          const double side = i % 3 == 0 ? uniform(0.0, 0.1) : uniform(0.5, 3.0);
          lo[a] = i % 10 == 0 ? std::round(uniform(-30, 30)) : uniform(-30, 30);  // some faces on voxel boundaries
          hi[a] = lo[a] + side;
        }
        // Voxels within reach: gap <= 2 on an axis means v in [ceil(lo - 3), floor(hi + 2)].
        bool near_solid = false, near_water = false;
        for (std::int32_t z = std::int32_t(std::ceil(lo[2] - 3)); z <= std::int32_t(std::floor(hi[2] + 2)); ++z) {
          for (std::int32_t y = std::int32_t(std::ceil(lo[1] - 3)); y <= std::int32_t(std::floor(hi[1] + 2)); ++y) {
            for (std::int32_t x = std::int32_t(std::ceil(lo[0] - 3)); x <= std::int32_t(std::floor(hi[0] + 2)); ++x) {
              const Voxel v = world->voxel({x, y, z});
              near_solid = near_solid || isSolidInside(v);
              near_water = near_water || isWater(v);
            }
          }
        }
        if (near_solid && near_water) continue;
        const Aabb box = worldBox(lo, hi, voxel_size);
        for (const MaskIndex* idx : {index.get(), walking.get()}) {
          REQUIRE(idx->query(box, out).ok());
          for (const ChunkTouch& t : out) {
            if (!near_solid) CHECK_MESSAGE(!t.solid, "box " << str(box) << " is far from solid, got " << str(t));
            if (!near_water) CHECK_MESSAGE(!t.water, "box " << str(box) << " is far from water, got " << str(t));
          }
        }
        airborne_solid += near_solid ? 0 : 1;
        airborne_water += near_water ? 0 : 1;
      }
      CHECK(airborne_solid > 500);
      CHECK(airborne_water > 500);
    }
  }

  SUBCASE("a box beside a lone solid or water voxel is reported up to a gap of 1.5 voxels on each of the 6 sides") {
    // Voxel 0 sets the bits of voxels -1..1; a box at gap d grown by one voxel reaches centre 1.5 (or -0.5) when d <= 1.5.
    for (const Voxel lone : {kRock, Voxel{kWaterMaterial, 1}}) {
      for (const double s : {1.0, 0.5}) {
        auto world = makeWorld(s);
        REQUIRE(world->setVoxel({0, 0, 0}, lone).ok());
        const auto index = makeIndex(*world);
        std::vector<ChunkTouch> out;
        for (int side = 0; side < 6; ++side) {
          const int a = side / 2;
          const bool up = side % 2 == 0;
          for (const double gap : {0.0, 1.0, 1.5, 1.5 + 1e-9, 2.0, 4.0}) {
            P3 lo{0.1, 0.1, 0.1}, hi{0.9, 0.9, 0.9};
            lo[std::size_t(a)] = up ? 1.0 + gap : -gap - 0.8;
            hi[std::size_t(a)] = up ? 1.0 + gap + 0.8 : -gap;
            REQUIRE(index->query(worldBox(lo, hi, s), out).ok());
            const bool reported =
                std::any_of(out.begin(), out.end(), [](const ChunkTouch& t) { return t.solid || t.water; });
            CHECK_MESSAGE(reported == (gap <= 1.5), "side " << side << " gap " << gap << " voxel size " << s << ": "
                                                            << str(out));
          }
        }
      }
    }
  }

  SUBCASE("a box above a flat floor is reported exactly while its grown box holds a centre of a voxel next to rock") {
    auto world = makeWorld(1.0);
    REQUIRE(world->fillBox({{-16, -16, -16}, {16, 0, 16}}, kRockId).ok());  // floor top at y = 0
    const auto index = makeIndex(*world);
    std::vector<ChunkTouch> out;
    auto solid = [&](double y0) {
      REQUIRE(index->query({{2.3, y0, 2.3}, {3.1, y0 + 1, 3.1}}, out).ok());
      return std::any_of(out.begin(), out.end(), [](const ChunkTouch& t) { return t.solid; });
    };
    // Grown by one, the box's lowest centre is y0 - 1 >= 0.5: voxel 0, air, whose neighbour -1 is rock: set.
    CHECK(solid(1.5));
    CHECK(solid(0.0));
    CHECK_FALSE(solid(1.5 + 1e-9));  // centres from 1.5 up: voxels 1..., 2 away from rock
    CHECK_FALSE(solid(2.01));
    CHECK_FALSE(solid(5.0));
  }
}

TEST_CASE("MaskIndex: after any edit the index equals the reference masks and a fresh index") {
  SUBCASE("after every edit of a random sequence the index equals the reference masks and a fresh index") {
    auto world = makeWorld(1.0);
    const auto index = makeIndex(*world);
    std::mt19937_64 rng(0x65646974ull);
    auto uniform = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
    auto corner = [&]() { return 8 * std::int32_t(rng() % 6) - 24 + std::int32_t(rng() % 2) - 1; };  // 8k-1 or 8k
    const std::uint8_t materials[] = {kRockId, kDirtId, kWaterMaterial, 4, 5};
    const std::vector<ChunkCoord> all = chunkCube(5);  // voxels -40..39: every edit below stays within -31..30
    for (int step = 0; step < 90; ++step) {
      const std::uint8_t material = materials[rng() % 5];
      const Vec3d centre = rng() % 3 == 0 ? Vec3d{double(8 * int(rng() % 6) - 24), double(8 * int(rng() % 6) - 24),
                                                  double(8 * int(rng() % 6) - 24)}
                                          : Vec3d{uniform(-24, 24), uniform(-24, 24), uniform(-24, 24)};
      const double r = uniform(0.4, 6.0);
      vtp::Result<EditResult> result = EditResult{};
      std::string what;
      switch (step % 10) {
        case 0: result = world->fillSphere(centre, r, material), what = "fillSphere"; break;
        case 1: result = world->clearSphere(centre, r), what = "clearSphere"; break;
        case 2: {
          const VoxelCoord a{corner(), corner(), corner()};
          const VoxelBox b{a, {a.x + 1 + std::int32_t(rng() % 10), a.y + 1 + std::int32_t(rng() % 10),
                               a.z + 1 + std::int32_t(rng() % 10)}};
          result = world->fillBox(b, material), what = "fillBox across a seam";
          break;
        }
        case 3: {
          // Empty whole chunks: clear a chunk-aligned block (and sometimes a little more).
          const ChunkCoord c{std::int32_t(rng() % 6) - 3, std::int32_t(rng() % 6) - 3, std::int32_t(rng() % 6) - 3};
          VoxelBox b = chunkBox(c);
          if (rng() % 2) b.max = {b.max.x + 1, b.max.y + 8, b.max.z};
          result = world->clearBox(b), what = "clearBox of a whole chunk";
          break;
        }
        case 4: case 5: {
          const VoxelCoord at{corner(), corner(), corner()};
          const Voxel values[] = {kAir, kRock, Voxel{kDirtId, 127}, Voxel{kDirtId, 128}, Voxel{kWaterMaterial, 1},
                                  Voxel{4, 1}};
          result = world->setVoxel(at, values[rng() % 6]), what = "setVoxel at a chunk corner";
          break;
        }
        case 6: result = world->fillCylinder(centre, r, uniform(0.5, 8.0), material), what = "fillCylinder"; break;
        case 7:
          result = world->paintSphere(centre, r, rng() % 2 ? kRockId : kDirtId), what = "paintSphere";
          break;
        case 8: {
          const VoxelCoord a{corner() - 2, corner() - 2, corner() - 2};
          const VoxelBox b{a, {a.x + 4, a.y + 4, a.z + 4}};
          std::vector<Voxel> voxels(64);
          for (auto& v : voxels) v = vtp::test::randomVoxel(rng);
          result = world->writeRegion(b, voxels), what = "writeRegion at a chunk corner";
          break;
        }
        default: {
          const std::vector<EditCommand> batch{
              ShapeEdit{SphereShape{centre, r}, EditOp::kFill, kWaterMaterial},
              ShapeEdit{BoxShape{{centre.x - 2, centre.y - 6, centre.z - 2}, {centre.x + 2, centre.y, centre.z + 2}},
                        EditOp::kClear, 0},
              ReplaceEdit{{{-24, -24, -24}, {24, 24, 24}}, kDirtId, 4}};
          result = world->apply(batch), what = "batch";
          break;
        }
      }
      REQUIRE_MESSAGE(result.ok(), what);
      what += " (step " + std::to_string(step) + ")";
      // Right after the edit: every chunk that sees the changed voxels.
      for (const ChunkCoord c : chunksSeeing(result->changed)) {
        const ChunkMasks reference = vtp::test::referenceMasks(vtp::test::readMaskBox(*world, c));
        if (index->masks(c) != reference) {
          FAIL_CHECK(what << ": chunk " << str(c) << " is stale\n  index:     "
                          << vtp::test::describe(index->masks(c))
                          << "\n  reference: " << vtp::test::describe(reference));
        }
      }
      if (step % 9 == 8 || step == 89) checkIndexCurrent(*world, *index, all, what);
    }
    // Far away nothing exists.
    CHECK(index->masks({1000, -1000, 5}) == ChunkMasks{});
    CHECK(index->masks({kMinChunk, kMinChunk, kMinChunk}) == ChunkMasks{});
  }

  SUBCASE("an index created on a populated world equals the reference, negative coordinates and voxel size included") {
    auto world = makeWorld(0.5);
    buildRandomWorld(*world, 31);
    buildCaveWorld(*world);
    const auto index = makeIndex(*world);
    checkIndexCurrent(*world, *index, chunkCube(5), "created on a populated world");
    CHECK(index->voxelSize() == 0.5);
  }

  SUBCASE("emptying a world completely removes every entry") {
    auto world = makeWorld(1.0);
    const auto index = makeIndex(*world);
    REQUIRE(world->fillSphere({-4.0, 4.0, 12.0}, 9.0, kRockId).ok());  // holds chunk (-1,0,1)'s whole box
    REQUIRE(world->fillBox({{-20, -4, -4}, {-12, 4, 4}}, kWaterMaterial).ok());
    CHECK(index->stats().entries > 27);
    CHECK(index->stats().full_solid > 0);
    REQUIRE(world->clearBox({{-32, -32, -32}, {32, 32, 32}}).ok());
    CHECK(world->stats().stored_chunks == 0);
    const auto stats = index->stats();
    CHECK(stats.entries == 0);
    CHECK(stats.mixed == 0);
    CHECK(stats.full_solid == 0);
    CHECK(stats.full_water == 0);
    CHECK(stats.mask_bytes == 0);
    for (const ChunkCoord c : chunkCube(4)) CHECK(index->masks(c) == ChunkMasks{});
  }

  SUBCASE("a query right after an edit returns sees it") {
    auto world = makeWorld(1.0);
    const auto index = makeIndex(*world);
    std::vector<ChunkTouch> out;
    const Aabb at_corner{{-0.25, -0.25, -0.25}, {0.25, 0.25, 0.25}};
    REQUIRE(index->query(at_corner, out).ok());
    CHECK(out.empty());
    REQUIRE(world->setVoxel({-1, -1, -1}, kRock).ok());
    REQUIRE(index->query(at_corner, out).ok());
    CHECK(out.size() == 8);  // voxel (-1,-1,-1) sets bits in all 8 chunks around the origin
    for (const ChunkTouch& t : out) CHECK((t.solid && !t.water && t.tag == MaskTag::kMixed));
    REQUIRE(world->setVoxel({-1, -1, -1}, Voxel{kWaterMaterial, 1}).ok());
    REQUIRE(index->query(at_corner, out).ok());
    CHECK(out.size() == 8);
    for (const ChunkTouch& t : out) CHECK((!t.solid && t.water));
    REQUIRE(world->setVoxel({-1, -1, -1}, kAir).ok());
    REQUIRE(index->query(at_corner, out).ok());
    CHECK(out.empty());
    CHECK(index->stats().entries == 0);
  }
}

// The batched query against the expected answers box by box: the whole list in one call, then in uneven slices
// (section boundaries fall elsewhere), each reusing one TouchBatch.
void checkBatches(const MaskIndex& index, const std::vector<Aabb>& boxes,
                  const std::vector<std::vector<ChunkTouch>>& expecteds, const std::string& phase) {
  vtp::physics::TouchBatch batch;
  REQUIRE(index.query(std::span<const Aabb>(), batch).ok());
  CHECK(batch.boxes() == 0);
  for (const std::size_t slice : {boxes.size(), std::size_t(1), std::size_t(63), std::size_t(130)}) {
    for (std::size_t first = 0; first < boxes.size(); first += slice) {
      const std::size_t n = std::min(slice, boxes.size() - first);
      REQUIRE(index.query(std::span<const Aabb>(boxes.data() + first, n), batch).ok());
      REQUIRE(batch.boxes() == n);
      for (std::size_t i = 0; i < n; ++i) {
        const auto got = batch.touches(i);
        const std::vector<ChunkTouch> touches(got.begin(), got.end());
        checkWellFormed(touches, phase);
        if (!sameTouches(touches, expecteds[first + i])) {
          FAIL_CHECK(phase << ", batched in slices of " << slice << ": box " << str(boxes[first + i])
                           << "\n  query:       " << str(touches) << "\n  brute force: " << str(expecteds[first + i]));
        }
      }
    }
  }
}

TEST_CASE("MaskIndex: query equals the chunk-by-chunk brute force on the range and index-walk paths") {
  for (const double voxel_size : {1.0, 0.5, 2.0}) {
    SUBCASE((std::string("query equals the chunk-by-chunk brute force on both the range and the index-walk path, voxel "
                         "size ") + std::to_string(voxel_size)).c_str()) {
      auto world = makeWorld(voxel_size);
      buildRandomWorld(*world, 41 + std::uint64_t(voxel_size * 4));
      buildCaveWorld(*world);
      // Uniform chunks in the box range: a FULL_WATER block and the cave's FULL_SOLID walls.
      REQUIRE(world->fillBox({{24, -8, -8}, {48, 16, 16}}, kWaterMaterial).ok());
      // FULL_SOLID chunks too: a rock block wider than a chunk's 10^3 box.
      REQUIRE(world->fillBox({{-48, -8, -8}, {-26, 16, 16}}, kRockId).ok());
      const std::int64_t max_ranges[] = {1, 8, 4096, std::int64_t{1} << 24};
      std::vector<std::unique_ptr<MaskIndex>> indexes;
      for (const std::int64_t max_range : max_ranges) indexes.push_back(makeIndex(*world, {max_range}));
      std::mt19937_64 rng(0x7175657279ull + std::uint64_t(voxel_size * 8));
      auto uniform = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
      auto run = [&](const std::string& phase) {
        const ReferenceIndex reference = referenceIndex(*world);
        REQUIRE(std::any_of(reference.begin(), reference.end(), [](const auto& e) { return e.second.tag == MaskTag::kFullWater; }));
        REQUIRE(std::any_of(reference.begin(), reference.end(), [](const auto& e) { return e.second.tag == MaskTag::kFullSolid; }));
        std::vector<ChunkTouch> out;
        std::size_t non_empty = 0;
        std::vector<Aabb> boxes;
        std::vector<std::vector<ChunkTouch>> expecteds;
        for (int i = 0; i < 800; ++i) {
          P3 lo{}, hi{};
          const int kind = i % 8;
          for (std::size_t a = 0; a < 3; ++a) {
            switch (kind) {
              case 0: lo[a] = uniform(-40, 50), hi[a] = lo[a] + uniform(0.0, 0.2); break;                  // tiny
              case 1: lo[a] = uniform(-40, 50), hi[a] = lo[a] + uniform(0.5, 3.0); break;                  // body
              case 2: lo[a] = std::round(uniform(-40, 50) * 2) / 2, hi[a] = lo[a] + double(rng() % 8) / 2; break;
              case 3: lo[a] = std::round(uniform(-40, 50) * 4) / 4 - 0.5, hi[a] = lo[a] + double(rng() % 12) / 4; break;
              case 4: lo[a] = uniform(-30000, -20), hi[a] = uniform(20, 30000); break;                     // huge
              case 5:  // a long thin box: more than 4096 chunks along one axis only
                lo[a] = int(a) == i % 3 ? -20000.0 : uniform(-20, 20);
                hi[a] = int(a) == i % 3 ? 20000.0 : lo[a] + uniform(0, 3);
                break;
              case 6: lo[a] = 8.0 * std::round(uniform(-5, 5)) - 1.5, hi[a] = lo[a] + double(rng() % 3); break;
              default: lo[a] = hi[a] = std::round(uniform(-40, 50) * 2) / 2; break;                        // a point
            }
          }
          const Aabb box = worldBox(lo, hi, voxel_size);
          const auto expected = bruteQuery(reference, box, voxel_size);
          non_empty += expected.empty() ? 0 : 1;
          boxes.push_back(box);
          expecteds.push_back(expected);
          for (const auto& idx : indexes) {
            out.assign(3, ChunkTouch{});
            REQUIRE(idx->query(box, out).ok());
            checkWellFormed(out, phase);
            if (!sameTouches(out, expected)) {
              FAIL_CHECK(phase << ", max_range_chunks " << max_ranges[&idx - indexes.data()] << ": box " << str(box)
                               << "\n  query:       " << str(out) << "\n  brute force: " << str(expected));
            }
          }
        }
        CHECK(non_empty > 200);
        // Body-sized boxes around chunk corners: 8 chunks each, so the batched walk's sections fill up.
        for (int i = 0; i < 300; ++i) {
          P3 lo{}, hi{};
          for (std::size_t a = 0; a < 3; ++a) {
            lo[a] = 8.0 * std::round(uniform(-5, 6)) + uniform(-2.0, 0.2);
            hi[a] = lo[a] + uniform(0.5, 3.0);
          }
          boxes.push_back(worldBox(lo, hi, voxel_size));
          expecteds.push_back(bruteQuery(reference, boxes.back(), voxel_size));
        }
        for (const auto& idx : indexes) {
          checkBatches(*idx, boxes, expecteds, phase);
          checkOwners(*idx, reference, phase);  // FULL_WATER chunks hold water, FULL_SOLID ones own no triangle
        }
      };
      run("after creation");
      std::mt19937_64 edit_rng(99);
      vtp::test::randomEdits(*world, {{-20, -14, -20}, {20, 14, 20}}, 15, edit_rng);
      REQUIRE(world->clearBox({{-16, 8, -16}, {0, 16, 0}}).ok());  // part of the ceiling goes
      run("after edits");
    }
  }

  SUBCASE("entries far outside the dense grid grow it or sit beside it, and a world spread too far for both answers "
          "from the hash table, all exactly as the brute force does; so does an index created on that world") {
    auto world = makeWorld(1.0);
    buildRandomWorld(*world, 61);
    auto index = makeIndex(*world);
    std::mt19937_64 rng(62);
    auto check = [&](const std::string& phase, const std::vector<P3>& centres) {
      const ReferenceIndex reference = referenceIndex(*world);
      std::vector<ChunkTouch> out;
      std::vector<Aabb> boxes;
      std::vector<std::vector<ChunkTouch>> expecteds;
      for (int i = 0; i < 600; ++i) {
        const P3& at = centres[std::size_t(i) % centres.size()];
        P3 lo{}, hi{};
        for (std::size_t a = 0; a < 3; ++a) {
          lo[a] = at[a] + std::uniform_real_distribution<double>(-20, 20)(rng);
          hi[a] = lo[a] + (i % 3 == 2 ? std::uniform_real_distribution<double>(0, 40)(rng)
                                       : std::uniform_real_distribution<double>(0.5, 3)(rng));
        }
        const Aabb box = worldBox(lo, hi, 1.0);
        REQUIRE(index->query(box, out).ok());
        const auto expected = bruteQuery(reference, box, 1.0);
        if (!sameTouches(out, expected)) {
          FAIL_CHECK(phase << ": box " << str(box) << "\n  query:       " << str(out)
                           << "\n  brute force: " << str(expected));
        }
        boxes.push_back(box);
        expecteds.push_back(expected);
      }
      checkBatches(*index, boxes, expecteds, phase);
      checkOwners(*index, reference, phase);
    };
    check("grid", {{0, 0, 0}});
    CHECK(index->stats().lock_free);
    CHECK(index->stats().beside_grid == 0);
    REQUIRE(world->fillSphere({120.0, 4.0, -100.0}, 3.0, kRockId).ok());  // outside the grid and its room
    check("grown grid", {{0, 0, 0}, {120, 4, -100}});
    // Too far for any grid over everything: its chunks sit beside the grid, and queries stay lock-free.
    REQUIRE(world->fillSphere({30000.0, 0.0, -30000.0}, 3.0, kRockId).ok());
    check("beside the grid", {{0, 0, 0}, {120, 4, -100}, {30000, 0, -30000}});
    CHECK(index->stats().lock_free);
    CHECK(index->stats().beside_grid > 0);
    CHECK(index->stats().beside_grid <= 64);
    // Created on the spread world: its candidates (the stored chunks' neighbours) come from a sort, not a bitmap of
    // the stored chunks' bounds (about 7,500 x 4 x 7,500 chunks). This sphere's lowest x and z layers are the first
    // layers of their chunks, so the chunks below them on those axes own its faces there but store nothing.
    REQUIRE(world->fillSphere({-29996.5, 0.5, 30003.5}, 3.2, kRockId).ok());
    const std::vector<P3> all_centres{{0, 0, 0}, {120, 4, -100}, {30000, 0, -30000}, {-29996.5, 0.5, 30003.5}};
    index = makeIndex(*world);
    check("created on the spread world", all_centres);
    std::vector<ChunkCoord> chunks = chunkCube(5);
    const VoxelBox spheres[] = {{{116, 0, -104}, {125, 8, -96}},
                                {{29996, -4, -30004}, {30004, 4, -29996}},
                                {{-30001, -4, 29999}, {-29992, 5, 30008}}};
    for (const VoxelBox& b : spheres) {
      const auto seeing = chunksSeeing(b);
      chunks.insert(chunks.end(), seeing.begin(), seeing.end());
    }
    checkIndexCurrent(*world, *index, chunks, "created on the spread world");
    CHECK(index->stats().lock_free);
    REQUIRE(world->clearBox({{29990, -10, -30010}, {30010, 10, -29990}}).ok());
    check("after clearing one far sphere", all_centres);
    index = makeIndex(*world);
    check("created again after clearing", all_centres);
    // More far entries than fit beside the grid, in four places: the hash table under the shared lock, exactly as
    // the brute force; once they are cleared, the grid and the lock-free path come back.
    std::vector<P3> spread{{0, 0, 0}};
    for (int k = 0; k < 4; ++k) {
      const double x = k % 2 ? 20000.0 : -20000.0, z = k / 2 ? 25000.0 : -25000.0;
      REQUIRE(world->fillBox({{int(x), -12, int(z)}, {int(x) + 24, 12, int(z) + 24}}, kRockId).ok());
      spread.push_back({x + 12, 0, z + 12});
    }
    check("spread too far", spread);
    CHECK_FALSE(index->stats().lock_free);
    for (int k = 0; k < 4; ++k) {
      const int x = k % 2 ? 20000 : -20000, z = k / 2 ? 25000 : -25000;
      REQUIRE(world->clearBox({{x - 2, -14, z - 2}, {x + 26, 14, z + 26}}).ok());
    }
    REQUIRE(world->clearBox({{-30010, -10, 29990}, {-29990, 10, 30010}}).ok());
    check("cleared again", spread);
    CHECK(index->stats().lock_free);
    CHECK(index->stats().beside_grid == 0);
  }

  SUBCASE("a huge box reports every chunk with an entry exactly as the brute force does") {
    auto world = makeWorld(1.0);
    buildRandomWorld(*world, 51);
    const auto index = makeIndex(*world);
    const ReferenceIndex reference = referenceIndex(*world);
    std::vector<ChunkTouch> out;
    const Aabb everything{{-60000, -60000, -60000}, {60000, 60000, 60000}};
    REQUIRE(index->query(everything, out).ok());
    CHECK(sameTouches(out, bruteQuery(reference, everything, 1.0)));
    CHECK(out.size() == reference.size());  // every entry touches something somewhere
  }
}

TEST_CASE("MaskIndex voxel spans: multiplying by an exact reciprocal gives the division's spans") {
  using vtp::physics::exactReciprocal;
  using vtp::physics::VoxelSpan;
  CHECK(exactReciprocal(1.0) == 1.0);
  CHECK(exactReciprocal(0.25) == 4.0);
  CHECK(exactReciprocal(8.0) == 0.125);
  CHECK(exactReciprocal(0.37) == 0.0);  // not a power of two: the query divides
  CHECK(exactReciprocal(3.0) == 0.0);
  CHECK(exactReciprocal(0.0) == 0.0);
  CHECK(exactReciprocal(kNaN) == 0.0);
  CHECK(exactReciprocal(std::numeric_limits<double>::denorm_min()) == 0.0);  // 1 / it overflows
  std::mt19937_64 rng(0x5ca1e);
  int compared = 0;
  for (const double voxel_size : {1.0, 0.5, 0.25, 2.0, 8.0, 1.0 / 1024}) {
    const double reciprocal = exactReciprocal(voxel_size);
    REQUIRE(reciprocal != 0.0);
    for (int i = 0; i < 20000; ++i) {
      // Coordinates on voxel boundaries and centres (where rounding decides), near them, and anywhere.
      auto coordinate = [&] {
        const double v = double(std::int64_t(rng() % 4000) - 2000) / 2.0;
        const int kind = int(rng() % 3);
        const double off = kind == 0   ? 0.0
                           : kind == 1 ? std::ldexp(double(rng() % 5) - 2.0, -40)
                                       : double(rng() % 1000) / 999.0;
        return (v + off) * voxel_size;
      };
      Aabb box{{coordinate(), coordinate(), coordinate()}, {}};
      box.max = {box.min.x + std::abs(coordinate()) / 64, box.min.y + std::abs(coordinate()) / 64,
                 box.min.z + std::abs(coordinate()) / 64};
      VoxelSpan by_multiply{}, by_division{};
      REQUIRE(vtp::physics::voxelSpan(box, voxel_size, reciprocal, by_multiply));
      REQUIRE(vtp::physics::voxelSpan(box, voxel_size, 0.0, by_division));
      const vtp::physics::QueryRange a = by_multiply.range(), b = by_division.range();
      for (int k = 0; k < 3; ++k) {
        CHECK(a.lo[k] == b.lo[k]);
        CHECK(a.hi[k] == b.hi[k]);
      }
      ++compared;
    }
  }
  CHECK(compared == 120000);
}

TEST_CASE("MaskIndex: bad boxes and options are refused and leave the output empty") {
  auto world = makeWorld(1.0);
  REQUIRE(world->fillSphere({0.0, 0.0, 0.0}, 5.0, kRockId).ok());
  const auto index = makeIndex(*world);
  const Aabb good{{-1, -1, -1}, {1, 1, 1}};

  SUBCASE("a non-finite coordinate is an error and leaves the output empty") {
    for (int field = 0; field < 6; ++field) {
      for (const double bad : {kNaN, kInf, -kInf}) {
        Aabb box = good;
        double* fields[] = {&box.min.x, &box.min.y, &box.min.z, &box.max.x, &box.max.y, &box.max.z};
        *fields[field] = bad;
        std::vector<ChunkTouch> out(5);
        const auto status = index->query(box, out);
        REQUIRE_FALSE(status.ok());
        CHECK(status.error().code == vtp::ErrorCode::kInvalidArgument);
        CHECK(out.empty());
      }
    }
  }

  SUBCASE("a box reaching 2^16 voxels from the origin is out of range; one just inside is answered") {
    for (int field = 0; field < 6; ++field) {
      for (const double far : {65536.0, -65536.0, 1e12}) {
        Aabb box{{-1, -1, -1}, {1, 1, 1}};
        double* fields[] = {&box.min.x, &box.min.y, &box.min.z, &box.max.x, &box.max.y, &box.max.z};
        *fields[field] = far;
        // Keep min <= max so only the range is wrong.
        if (box.min.x > box.max.x) std::swap(box.min.x, box.max.x);
        if (box.min.y > box.max.y) std::swap(box.min.y, box.max.y);
        if (box.min.z > box.max.z) std::swap(box.min.z, box.max.z);
        std::vector<ChunkTouch> out(5);
        const auto status = index->query(box, out);
        REQUIRE_FALSE(status.ok());
        CHECK(status.error().code == vtp::ErrorCode::kOutOfRange);
        CHECK(out.empty());
      }
    }
    std::vector<ChunkTouch> out;
    CHECK(index->query({{-65535.5, -65535.5, -65535.5}, {65535.5, 65535.5, 65535.5}}, out).ok());
    CHECK_FALSE(out.empty());
  }

  SUBCASE("a batch with one invalid box is an error naming its position, and answers no box") {
    vtp::physics::TouchBatch batch;
    const Aabb fine{{1, 1, 1}, {2, 2, 2}};
    std::vector<Aabb> boxes(150, fine);
    REQUIRE(index->query(boxes, batch).ok());
    CHECK(batch.boxes() == 150);
    // Both places in a pair of the batched walk (which takes two boxes at a time), and the last box.
    for (const std::size_t at : {std::size_t(96), std::size_t(97), std::size_t(149)}) {
      for (const Aabb bad : {Aabb{{1, 1, 1}, {std::nan(""), 2, 2}}, Aabb{{1, 2, 1}, {2, 1, 2}},
                             Aabb{{1, 1, 1}, {2, 2, 1e9}}}) {
        boxes[at] = bad;
        const vtp::Status status = index->query(boxes, batch);
        REQUIRE(!status.ok());
        CHECK(status.error().message.find("box " + std::to_string(at) + " of the batch") != std::string::npos);
        CHECK(batch.boxes() == 0);
      }
      boxes[at] = fine;
    }
  }

  SUBCASE("min above max on any axis is an error and leaves the output empty") {
    for (int a = 0; a < 3; ++a) {
      Aabb box = good;
      (a == 0 ? box.min.x : a == 1 ? box.min.y : box.min.z) = 1.5;
      std::vector<ChunkTouch> out(5);
      const auto status = index->query(box, out);
      REQUIRE_FALSE(status.ok());
      CHECK(status.error().code == vtp::ErrorCode::kInvalidArgument);
      CHECK(out.empty());
    }
    // min == max is a point, not an error.
    std::vector<ChunkTouch> out;
    CHECK(index->query({{0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}}, out).ok());
    CHECK(!out.empty());
  }

  SUBCASE("invalid options are an error from create") {
    for (const std::int64_t bad : {std::int64_t{0}, std::int64_t{-1}, (std::int64_t{1} << 24) + 1,
                                   std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()}) {
      auto created = MaskIndex::create(*world, {bad});
      REQUIRE_FALSE(created.ok());
      CHECK(created.error().code == vtp::ErrorCode::kInvalidArgument);
    }
    CHECK(MaskIndex::create(*world, {1}).ok());
    CHECK(MaskIndex::create(*world, {std::int64_t{1} << 24}).ok());
  }
}

TEST_CASE("MaskIndex: queries on two threads see every finished edit of a third") {
  SUBCASE("two threads query while a third edits, and every finished edit is visible to them") {
    auto world = makeWorld(1.0);
    buildRandomWorld(*world, 61);
    // A region no edit reaches (the edits' shapes stay within 27 voxels of the origin, the markers at y 40; the boxes
    // below only see chunks from x and z 32 on): its answers must not change while the others do.
    REQUIRE(world->fillBox({{33, -6, 33}, {47, 2, 47}}, kRockId).ok());
    REQUIRE(world->clearSphere({40.0, 2.0, 40.0}, 4.5).ok());
    const auto index = makeIndex(*world);
    std::vector<Aabb> still;
    std::vector<std::vector<ChunkTouch>> still_expected;
    {
      std::mt19937_64 rng(72);
      std::uniform_real_distribution<double> at(34.5, 44.0), y(-9.0, 5.0), size(0.5, 3.0);
      for (int i = 0; i < 64; ++i) {
        const double x = at(rng), yy = y(rng), z = at(rng), e = size(rng);
        still.push_back({{x, yy, z}, {x + e, yy + e, z + e}});
        still_expected.emplace_back();
        REQUIRE(index->query(still.back(), still_expected.back()).ok());
      }
      CHECK(std::count_if(still_expected.begin(), still_expected.end(), [](const auto& v) { return !v.empty(); }) > 20);
    }
    // The editor fills marker voxels on a line far from the random edits, one by one, publishing how many it did.
    constexpr int kMarkers = 120;
    auto marker = [](int i) { return VoxelCoord{-40 + i % 60, 40, -40 + 2 * (i / 60)}; };
    std::atomic<int> markers_done{0};
    std::atomic<bool> failed{false};
    std::thread editor([&] {
      std::mt19937_64 rng(71);
      for (int i = 0; i < kMarkers; ++i) {
        vtp::test::randomEdits(*world, {{-20, -14, -20}, {20, 14, 20}}, 1, rng);
        if (!world->setVoxel(marker(i), kRock).ok()) failed = true;
        markers_done.store(i + 1, std::memory_order_release);
      }
    });
    // One reader queries box by box, the other in batches of 100 (the marker's box first).
    auto reader = [&](std::uint64_t seed, bool batched) {
      std::mt19937_64 rng(seed);
      std::vector<ChunkTouch> out;
      vtp::physics::TouchBatch batch;
      std::vector<Aabb> boxes;
      for (;;) {
        const int done = markers_done.load(std::memory_order_acquire);
        boxes.clear();
        VoxelCoord m{};
        if (done > 0) {
          // A marker whose edit returned must be seen.
          m = marker(int(rng() % unsigned(done)));
          boxes.push_back({{m.x + 0.4, m.y + 0.4, m.z + 0.4}, {m.x + 0.6, m.y + 0.6, m.z + 0.6}});
        }
        for (int i = 0; i < (batched ? 100 : 1); ++i) {
          const double x = std::uniform_real_distribution<double>(-30, 30)(rng);
          boxes.push_back({{x, x / 2, -x}, {x + 3, x / 2 + 3, -x + 3}});
        }
        const std::size_t first_still = boxes.size();  // then boxes of the region no edit reaches
        boxes.insert(boxes.end(), still.begin(), still.begin() + (batched ? 64 : 1));
        if (batched && !index->query(boxes, batch).ok()) failed = true;
        for (std::size_t b = 0; b < boxes.size(); ++b) {
          if (batched) {
            out.assign(batch.touches(b).begin(), batch.touches(b).end());
          } else if (!index->query(boxes[b], out).ok()) {
            failed = true;
          }
          const auto marked = [&](const ChunkTouch& t) { return t.chunk == chunkOf(m) && t.solid; };
          if (b == 0 && done > 0 && std::none_of(out.begin(), out.end(), marked)) failed = true;
          for (std::size_t i = 1; i < out.size(); ++i) {
            if (!(out[i - 1].chunk < out[i].chunk)) failed = true;
          }
          if (b >= first_still && !sameTouches(out, still_expected[b - first_still])) failed = true;
        }
        if (done == kMarkers) break;
      }
    };
    std::thread a(reader, 81, false), b(reader, 82, true);
    editor.join();
    a.join();
    b.join();
    CHECK_FALSE(failed.load());
    checkIndexCurrent(*world, *index, chunkCube(6), "after the threaded edits");
  }
}

TEST_CASE("MaskIndex: a far entry coming and going beside a full outlier table reuses its grid instead of piling up") {
  auto world = makeWorld(1.0);
  buildRandomWorld(*world, 71);
  auto index = makeIndex(*world);
  // 64 single voxels far out, each in the middle of its own chunk (one entry each): the table beside the grid fills.
  for (int k = 0; k < 64; ++k) {
    const VoxelCoord v{20004 + 64 * (k % 8), 4, -20004 - 64 * (k / 8)};
    REQUIRE(world->setVoxel(v, Voxel{kRockId, 255}).ok());
  }
  CHECK(index->stats().lock_free);
  CHECK(index->stats().beside_grid == 64);
  const VoxelCoord extra{-20004, 4, 20004};
  std::size_t first_cycle_bytes = 0;
  for (int cycle = 0; cycle < 12; ++cycle) {
    REQUIRE(world->setVoxel(extra, Voxel{kRockId, 255}).ok());  // a 65th: no room beside the grid
    REQUIRE(world->setVoxel(extra, Voxel{}).ok());              // gone again: the grid comes back
    CHECK(index->stats().lock_free);
    if (cycle == 0) first_cycle_bytes = index->stats().index_bytes;
  }
  CHECK(index->stats().index_bytes == first_cycle_bytes);
  // And it still answers as the brute force does, at the far voxels and at home.
  const ReferenceIndex reference = referenceIndex(*world);
  std::vector<ChunkTouch> out;
  for (const Aabb& box : {worldBox({20000, 0, -20000}, {20010, 8, -19990}, 1.0), worldBox({-3, -3, -3}, {5, 5, 5}, 1.0),
                          worldBox({-20010, 0, 19990}, {-19990, 8, 20010}, 1.0)}) {
    REQUIRE(index->query(box, out).ok());
    CHECK(sameTouches(out, bruteQuery(reference, box, 1.0)));
  }
}
