// How the figures are taken (voxel units throughout; query boxes are scaled by the world's voxel size):
// - Mask build: every chunk within one chunk of a stored chunk is read once as its 10^3 box and built; the MIXED ones
//   are kept. They are measured in groups of 8 consecutive boxes (16 KB, L1-resident): batches of 1024
//   buildChunkMasks calls cycling over the group, median of 3 batches, clock overhead subtracted. The figure is the
//   median over groups. The same builds check that the index holds exactly these masks.
// - Index: MaskIndex::create on the loaded world, median of 3 (construction only; destruction not timed).
// - Surfaces: every chunk that owns a triangle (stored chunks and the chunk below each along x, y, z, as in
//   mesh_bench), meshed once with SurfaceMesher; its mesh AABB bounds its owned triangles.
// - Precision: airborne bodies (cubes of 0.5-3 voxels centred uniformly inside a random surface chunk's mesh AABB,
//   kept when the Euclidean distance from the cube to every solid-inside voxel centre is at least 3) and resting
//   bodies (a uniform XZ footprint, bottom at the highest point of the owned triangles clipped to the footprint minus
//   0.001). A pair is a body and a chunk whose mesh AABB overlaps the body's AABB (closed); it is TRUE when an owned
//   triangle intersects the body (exact separating-axis test in double, Akenine-Moller 2001 "Fast 3D triangle-box
//   overlap testing"). The masks reject a pair when MaskIndex::query does not report solid for its chunk.
// - Query: the airborne and resting bodies shuffled. query_ns_*: the batched query, 256 bodies a call (a server step's
//   bodies), consecutive slices of the list; single_query_ns_*: one call per body (reusing the output vector). Both
//   median of 3; chunks visited = the chunk range of the box grown by one voxel and mapped to voxel centres.
// - Edits: two copies of the world, one with a MaskIndex and one without, receive the same edits; each call is timed
//   on its own (clock overhead subtracted) and the median taken. Single voxels toggle between solid-inside rock and
//   air at random voxels of surface chunks, a quarter of them at a chunk corner (touching 8 chunks' boxes); spheres
//   of radius 8 are filled and then cleared at random points of surface chunks. Afterwards the kept-current index
//   must equal one built from scratch.
#include "mask_bench.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <unordered_map>
#include <vector>

#include "report.h"
#include "timing.h"
#include "vtp/mesher/mesh_candidates.h"
#include "vtp/mesher/surface_mesher.h"
#include "vtp/physics/chunk_masks.h"
#include "vtp/physics/mask_index.h"
#include "vtp/terrain/world_file.h"

namespace vtp::tools {
namespace {

using namespace vtp::terrain;
using physics::ChunkMasks;
using physics::MaskIndex;
using physics::MaskTag;
using physics::SliceMask;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kBoxVoxels = std::size_t(physics::kMaskBoxVolume);
constexpr std::size_t kGroup = 8;           // boxes per build batch: 16 KB, L1-resident
constexpr std::size_t kBuildCalls = 1024;   // calls per build batch
constexpr int kBodies = 10000;              // per precision category
constexpr std::uint64_t kMaxTries = 20'000'000;  // per category
// Airborne placement gives up after kGiveUpTries when fewer than kGiveUpBodies were found (a world without caves or
// overhangs has almost no place for them; the default world finds about 3,400 by then).
constexpr std::uint64_t kGiveUpTries = 1'000'000;
constexpr std::size_t kGiveUpBodies = 100;
constexpr int kEdits = 1000;
constexpr int kSphereEdits = 100;           // each a fill then a clear
constexpr double kSphereRadius = 8.0;
constexpr std::size_t kQueryBatch = 256;  // bodies per batched query: a server step's bodies
constexpr double kMinEdge = 0.5, kMaxEdge = 3.0;  // body cube edge [voxel]
constexpr double kAirGap = 3.0;             // airborne bodies' distance to solid-inside voxel centres [voxel]
constexpr double kRestDepth = 0.001;        // resting bodies sink this far below the surface [voxel]

struct ChunkHash {
  std::size_t operator()(const ChunkCoord& c) const noexcept {
    return std::size_t(std::uint32_t(c.x) * 73856093u ^ std::uint32_t(c.y) * 19349663u ^
                       std::uint32_t(c.z) * 83492791u);
  }
};

// Deterministic uniform doubles from a 64-bit engine (the standard distributions differ between libraries).
struct Rng {
  std::mt19937_64 engine;
  explicit Rng(std::uint64_t seed) : engine(seed) {}
  double unit() { return double(engine() >> 11) * 0x1p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit(); }
  std::size_t index(std::size_t n) { return std::size_t(engine() % n); }
};

struct Box3 {
  std::array<double, 3> lo, hi;  // [Unit: voxel]
};

bool overlaps(const Box3& a, const Box3& b) {
  for (int k = 0; k < 3; ++k)
    if (a.lo[k] > b.hi[k] || b.lo[k] > a.hi[k]) return false;
  return true;
}

VoxelBox apronBox(ChunkCoord c) { return grown(chunkBox(c), physics::kMaskApron); }

std::int32_t floorDiv8(double v) { return floorDivChunk(std::int32_t(std::floor(v))); }

// Every chunk whose 10^3 box can hold a solid-inside or water voxel: within one chunk of a stored chunk.
std::vector<ChunkCoord> neighbourhood(const World& world, const std::vector<ChunkCoord>& extra = {}) {
  std::vector<ChunkCoord> out;
  auto add = [&](ChunkCoord c) {
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) out.push_back({c.x + dx, c.y + dy, c.z + dz});
  };
  {
    auto guard = world.read();
    world.forEachChunk(guard, [&](ChunkCoord c, const Chunk&) { add(c); });
  }
  for (ChunkCoord c : extra) add(c);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// --- The world's solid-inside voxels, for the airborne bodies' distance rule ---------------------------------------

class SolidVoxels {
 public:
  static Result<SolidVoxels> read(const World& world) {
    SolidVoxels s;
    std::vector<ChunkCoord> stored;
    {
      auto guard = world.read();
      world.forEachChunk(guard, [&](ChunkCoord c, const Chunk&) { stored.push_back(c); });
    }
    std::vector<Voxel> box(kChunkVolume);
    for (ChunkCoord c : stored) {
      if (Status st = world.readBox(chunkBox(c), box); !st) return st.error();
      SliceMask bits{};
      bool any = false;
      for (int z = 0; z < kChunkSize; ++z)
        for (int y = 0; y < kChunkSize; ++y)
          for (int x = 0; x < kChunkSize; ++x)
            if (isSolidInside(box[std::size_t(x + kChunkSize * (y + kChunkSize * z))])) {
              bits[std::size_t(y)] |= std::uint64_t(1) << (x + 8 * z);
              any = true;
            }
      if (any) s.m_chunks.emplace(c, bits);
    }
    return s;
  }

  // True when every solid-inside voxel centre (v + 0.5) lies at Euclidean distance >= gap from the box.
  bool clearOf(const Box3& b, double gap) const {
    std::array<std::int32_t, 3> vlo, vhi;
    for (int k = 0; k < 3; ++k) {
      vlo[k] = std::int32_t(std::ceil(b.lo[k] - gap - 0.5));
      vhi[k] = std::int32_t(std::floor(b.hi[k] + gap - 0.5));
    }
    const double gap2 = gap * gap;
    for (std::int32_t cz = floorDivChunk(vlo[2]); cz <= floorDivChunk(vhi[2]); ++cz)
      for (std::int32_t cy = floorDivChunk(vlo[1]); cy <= floorDivChunk(vhi[1]); ++cy)
        for (std::int32_t cx = floorDivChunk(vlo[0]); cx <= floorDivChunk(vhi[0]); ++cx) {
          const auto it = m_chunks.find({cx, cy, cz});
          if (it == m_chunks.end()) continue;
          const SliceMask& bits = it->second;
          const VoxelCoord o = chunkOrigin({cx, cy, cz});
          for (int y = std::max(0, vlo[1] - o.y); y <= std::min(7, vhi[1] - o.y); ++y) {
            if (bits[std::size_t(y)] == 0) continue;
            for (int z = std::max(0, vlo[2] - o.z); z <= std::min(7, vhi[2] - o.z); ++z)
              for (int x = std::max(0, vlo[0] - o.x); x <= std::min(7, vhi[0] - o.x); ++x) {
                if (!((bits[std::size_t(y)] >> (x + 8 * z)) & 1)) continue;
                const double p[3] = {o.x + x + 0.5, o.y + y + 0.5, o.z + z + 0.5};
                double d2 = 0;
                for (int k = 0; k < 3; ++k) {
                  const double d = std::max({0.0, b.lo[k] - p[k], p[k] - b.hi[k]});
                  d2 += d * d;
                }
                if (d2 < gap2) return false;
              }
          }
        }
    return true;
  }

 private:
  std::unordered_map<ChunkCoord, SliceMask, ChunkHash> m_chunks;
};

// --- Owned triangles of every surface chunk ----------------------------------------------------------------------

struct Triangle {
  std::array<std::int32_t, 9> v;  // three vertices, world coordinates [Unit: 1/1024 voxel]
};

struct Surface {
  ChunkCoord coord;
  Box3 aabb;  // of the owned triangles [Unit: voxel]
  std::uint32_t first = 0, count = 0;
};

struct Surfaces {
  std::vector<Surface> chunks;  // ChunkCoord order
  std::vector<Triangle> triangles;
  std::unordered_map<ChunkCoord, std::uint32_t, ChunkHash> by_coord;
  std::unordered_map<ChunkCoord, std::vector<std::uint32_t>, ChunkHash> by_column;  // key (cx, 0, cz)

  const Surface* find(ChunkCoord c) const {
    const auto it = by_coord.find(c);
    return it == by_coord.end() ? nullptr : &chunks[it->second];
  }
};

Result<Surfaces> meshSurfaces(const World& world) {
  const std::vector<ChunkCoord> candidates = mesher::candidateChunks(world);

  Surfaces s;
  mesher::SurfaceMesher surface_mesher;
  mesher::ChunkMesh mesh;
  std::vector<Voxel> box(kBoxVoxels);
  for (const ChunkCoord c : candidates) {
    if (Status st = world.readBox(apronBox(c), box); !st) return st.error();
    if (Result<int> n = surface_mesher.mesh(box, mesher::kApron, mesh); !n) return n.error();
    if (mesh.owned_triangle_count == 0) continue;
    const VoxelCoord o = chunkOrigin(c);
    const std::int32_t base[3] = {o.x * mesher::kPositionScale, o.y * mesher::kPositionScale,
                                  o.z * mesher::kPositionScale};
    Surface surface{c, {}, std::uint32_t(s.triangles.size()), std::uint32_t(mesh.owned_triangle_count)};
    std::array<std::int32_t, 3> lo{INT32_MAX, INT32_MAX, INT32_MAX}, hi{INT32_MIN, INT32_MIN, INT32_MIN};
    for (int t = 0; t < mesh.owned_triangle_count; ++t) {
      Triangle tri;
      for (int i = 0; i < 3; ++i) {
        const mesher::Vertex& v = mesh.vertices[mesh.indices[std::size_t(3 * t + i)]];
        const std::int32_t p[3] = {base[0] + v.x, base[1] + v.y, base[2] + v.z};
        for (int k = 0; k < 3; ++k) {
          tri.v[std::size_t(3 * i + k)] = p[k];
          lo[std::size_t(k)] = std::min(lo[std::size_t(k)], p[k]);
          hi[std::size_t(k)] = std::max(hi[std::size_t(k)], p[k]);
        }
      }
      s.triangles.push_back(tri);
    }
    for (std::size_t k = 0; k < 3; ++k) {
      surface.aabb.lo[k] = double(lo[k]) / mesher::kPositionScale;
      surface.aabb.hi[k] = double(hi[k]) / mesher::kPositionScale;
    }
    s.by_coord.emplace(c, std::uint32_t(s.chunks.size()));
    s.by_column[{c.x, 0, c.z}].push_back(std::uint32_t(s.chunks.size()));
    s.chunks.push_back(surface);
  }
  return s;
}

std::array<double, 9> toVoxels(const Triangle& t) {
  std::array<double, 9> out;
  for (std::size_t i = 0; i < 9; ++i) out[i] = double(t.v[i]) / mesher::kPositionScale;
  return out;
}

// Closed triangle/box overlap by the separating-axis theorem (13 axes), in double.
bool triangleTouchesBox(const std::array<double, 9>& tri, const Box3& b) {
  double c[3], h[3], v[3][3];
  for (int k = 0; k < 3; ++k) {
    c[k] = 0.5 * (b.lo[std::size_t(k)] + b.hi[std::size_t(k)]);
    h[k] = 0.5 * (b.hi[std::size_t(k)] - b.lo[std::size_t(k)]);
  }
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) v[i][k] = tri[std::size_t(3 * i + k)] - c[k];
  // The box's face normals.
  for (int k = 0; k < 3; ++k) {
    if (std::min({v[0][k], v[1][k], v[2][k]}) > h[k] || std::max({v[0][k], v[1][k], v[2][k]}) < -h[k]) return false;
  }
  double e[3][3];
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) e[i][k] = v[(i + 1) % 3][k] - v[i][k];
  auto axisSeparates = [&](const double a[3]) {
    const double p0 = a[0] * v[0][0] + a[1] * v[0][1] + a[2] * v[0][2];
    const double p1 = a[0] * v[1][0] + a[1] * v[1][1] + a[2] * v[1][2];
    const double p2 = a[0] * v[2][0] + a[1] * v[2][1] + a[2] * v[2][2];
    const double r = h[0] * std::abs(a[0]) + h[1] * std::abs(a[1]) + h[2] * std::abs(a[2]);
    return std::min({p0, p1, p2}) > r || std::max({p0, p1, p2}) < -r;
  };
  // The triangle's normal.
  const double n[3] = {e[0][1] * e[1][2] - e[0][2] * e[1][1], e[0][2] * e[1][0] - e[0][0] * e[1][2],
                       e[0][0] * e[1][1] - e[0][1] * e[1][0]};
  if (axisSeparates(n)) return false;
  // Edge x box-axis cross products.
  for (int i = 0; i < 3; ++i) {
    const double a0[3] = {0, -e[i][2], e[i][1]};
    const double a1[3] = {e[i][2], 0, -e[i][0]};
    const double a2[3] = {-e[i][1], e[i][0], 0};
    if (axisSeparates(a0) || axisSeparates(a1) || axisSeparates(a2)) return false;
  }
  return true;
}

// Highest point of the triangle inside the closed XZ rectangle, by clipping (Sutherland-Hodgman); false when the
// triangle's projection misses the rectangle.
bool highestInFootprint(const std::array<double, 9>& tri, double x0, double x1, double z0, double z1, double& top) {
  using P = std::array<double, 3>;
  std::vector<P> poly = {{tri[0], tri[1], tri[2]}, {tri[3], tri[4], tri[5]}, {tri[6], tri[7], tri[8]}}, next;
  auto clip = [&](int axis, double bound, bool keep_above) {
    next.clear();
    for (std::size_t i = 0; i < poly.size(); ++i) {
      const P& a = poly[i];
      const P& b = poly[(i + 1) % poly.size()];
      const double da = keep_above ? a[std::size_t(axis)] - bound : bound - a[std::size_t(axis)];
      const double db = keep_above ? b[std::size_t(axis)] - bound : bound - b[std::size_t(axis)];
      if (da >= 0) next.push_back(a);
      if ((da >= 0) != (db >= 0)) {
        const double t = da / (da - db);
        P p;
        for (std::size_t k = 0; k < 3; ++k) p[k] = a[k] + t * (b[k] - a[k]);
        p[std::size_t(axis)] = bound;
        next.push_back(p);
      }
    }
    poly.swap(next);
  };
  clip(0, x0, true);
  if (!poly.empty()) clip(0, x1, false);
  if (!poly.empty()) clip(2, z0, true);
  if (!poly.empty()) clip(2, z1, false);
  if (poly.empty()) return false;
  top = poly[0][1];
  for (const P& p : poly) top = std::max(top, p[1]);
  return true;
}

// --- Precision -----------------------------------------------------------------------------------------------------

struct PairCounts {
  std::uint64_t bodies = 0, tries = 0, pairs = 0, true_pairs = 0, false_pairs = 0;
  std::uint64_t rejected_false_pairs = 0, violations = 0;

  nlohmann::json json() const {
    nlohmann::json j;
    j["bodies"] = bodies;
    j["tries"] = tries;
    j["pairs"] = pairs;
    j["true_pairs"] = true_pairs;
    j["false_pairs"] = false_pairs;
    j["rejected_false_pairs"] = rejected_false_pairs;
    j["passed_false_pairs"] = false_pairs - rejected_false_pairs;
    j["violations"] = violations;
    if (false_pairs > 0) {
      j["false_pair_rejection"] = double(rejected_false_pairs) / double(false_pairs);
    } else {
      j["false_pair_rejection"] = nullptr;
    }
    return j;
  }
};

physics::Aabb worldAabb(const Box3& b, double voxel_size) {
  return {{b.lo[0] * voxel_size, b.lo[1] * voxel_size, b.lo[2] * voxel_size},
          {b.hi[0] * voxel_size, b.hi[1] * voxel_size, b.hi[2] * voxel_size}};
}

// Classifies every body-chunk pair (mesh AABB overlap) of `body`.
Status countPairs(const Box3& body, const Surfaces& surfaces, const MaskIndex& index,
                  std::vector<physics::ChunkTouch>& touches, PairCounts& counts) {
  if (Status st = index.query(worldAabb(body, index.voxelSize()), touches); !st) return st;
  // Owned triangles lie within one voxel of their chunk.
  for (std::int32_t cz = floorDiv8(body.lo[2] - 1); cz <= floorDiv8(body.hi[2] + 1); ++cz)
    for (std::int32_t cy = floorDiv8(body.lo[1] - 1); cy <= floorDiv8(body.hi[1] + 1); ++cy)
      for (std::int32_t cx = floorDiv8(body.lo[0] - 1); cx <= floorDiv8(body.hi[0] + 1); ++cx) {
        const ChunkCoord c{cx, cy, cz};
        const Surface* s = surfaces.find(c);
        if (s == nullptr || !overlaps(s->aabb, body)) continue;
        ++counts.pairs;
        bool touching = false;
        for (std::uint32_t t = s->first; t < s->first + s->count && !touching; ++t)
          touching = triangleTouchesBox(toVoxels(surfaces.triangles[t]), body);
        const bool reported = std::any_of(touches.begin(), touches.end(),
                                          [&](const physics::ChunkTouch& t) { return t.chunk == c && t.solid; });
        if (touching) {
          ++counts.true_pairs;
          if (!reported) ++counts.violations;
        } else {
          ++counts.false_pairs;
          if (!reported) ++counts.rejected_false_pairs;
        }
      }
  return {};
}

Box3 cube(const std::array<double, 3>& centre, double edge) {
  Box3 b;
  for (std::size_t k = 0; k < 3; ++k) {
    b.lo[k] = centre[k] - 0.5 * edge;
    b.hi[k] = centre[k] + 0.5 * edge;
  }
  return b;
}

// Airborne bodies: centred in a random surface chunk's mesh AABB, >= kAirGap from every solid-inside voxel centre.
std::vector<Box3> airborneBodies(const Surfaces& surfaces, const SolidVoxels& solid, Rng& rng, std::uint64_t& tries) {
  std::vector<Box3> bodies;
  tries = 0;
  if (surfaces.chunks.empty()) return bodies;
  while (bodies.size() < std::size_t(kBodies) && tries < kMaxTries) {
    ++tries;
    const Surface& s = surfaces.chunks[rng.index(surfaces.chunks.size())];
    std::array<double, 3> centre;
    for (std::size_t k = 0; k < 3; ++k) centre[k] = rng.uniform(s.aabb.lo[k], s.aabb.hi[k]);
    const Box3 b = cube(centre, rng.uniform(kMinEdge, kMaxEdge));
    if (solid.clearOf(b, kAirGap)) bodies.push_back(b);
    if (tries == kGiveUpTries && bodies.size() < kGiveUpBodies) break;
  }
  return bodies;
}

// Resting bodies: a uniform XZ footprint over the surfaces' extent, bottom just below the highest owned triangle.
std::vector<Box3> restingBodies(const Surfaces& surfaces, Rng& rng, std::uint64_t& tries) {
  std::vector<Box3> bodies;
  tries = 0;
  if (surfaces.chunks.empty()) return bodies;
  Box3 extent = surfaces.chunks.front().aabb;
  for (const Surface& s : surfaces.chunks)
    for (std::size_t k = 0; k < 3; ++k) {
      extent.lo[k] = std::min(extent.lo[k], s.aabb.lo[k]);
      extent.hi[k] = std::max(extent.hi[k], s.aabb.hi[k]);
    }
  while (bodies.size() < std::size_t(kBodies) && tries < kMaxTries) {
    ++tries;
    const double edge = rng.uniform(kMinEdge, kMaxEdge);
    const double cx = rng.uniform(extent.lo[0], extent.hi[0]);
    const double cz = rng.uniform(extent.lo[2], extent.hi[2]);
    const double x0 = cx - 0.5 * edge, x1 = cx + 0.5 * edge, z0 = cz - 0.5 * edge, z1 = cz + 0.5 * edge;
    bool found = false;
    double top = 0;
    for (std::int32_t qz = floorDiv8(z0 - 1); qz <= floorDiv8(z1 + 1); ++qz)
      for (std::int32_t qx = floorDiv8(x0 - 1); qx <= floorDiv8(x1 + 1); ++qx) {
        const auto it = surfaces.by_column.find({qx, 0, qz});
        if (it == surfaces.by_column.end()) continue;
        for (const std::uint32_t i : it->second) {
          const Surface& s = surfaces.chunks[i];
          if (s.aabb.lo[0] > x1 || s.aabb.hi[0] < x0 || s.aabb.lo[2] > z1 || s.aabb.hi[2] < z0) continue;
          if (found && s.aabb.hi[1] <= top) continue;
          for (std::uint32_t t = s.first; t < s.first + s.count; ++t) {
            double y = 0;
            if (highestInFootprint(toVoxels(surfaces.triangles[t]), x0, x1, z0, z1, y) && (!found || y > top)) {
              top = y;
              found = true;
            }
          }
        }
      }
    if (!found) continue;
    const double bottom = top - kRestDepth;
    bodies.push_back({{x0, bottom, z0}, {x1, bottom + edge, z1}});
  }
  return bodies;
}

// Chunks in a query's range: the box grown by one voxel, mapped to the voxels whose centres lie inside it.
std::uint64_t chunksVisited(const Box3& b) {
  std::uint64_t n = 1;
  for (std::size_t k = 0; k < 3; ++k) {
    const std::int32_t vlo = std::int32_t(std::ceil(b.lo[k] - 1.5));
    const std::int32_t vhi = std::int32_t(std::floor(b.hi[k] + 0.5));
    if (vhi < vlo) return 0;
    n *= std::uint64_t(floorDivChunk(vhi) - floorDivChunk(vlo) + 1);
  }
  return n;
}

// --- Edits ---------------------------------------------------------------------------------------------------------

// v sorted ascending; nearest-rank percentile, q in (0, 1]; 0 when empty.
double percentile(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const std::size_t rank = std::size_t(std::max(1.0, std::ceil(q * double(v.size()))));
  return v[std::min(rank, v.size()) - 1];
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Fn>
double timedUs(Fn&& fn, double overhead_ns, bool& ok) {
  const auto a = Clock::now();
  const bool call_ok = fn();
  const auto b = Clock::now();
  ok = ok && call_ok;
  return std::max(0.0, std::chrono::duration<double, std::nano>(b - a).count() - overhead_ns) / 1000.0;
}

}  // namespace

Result<nlohmann::json> benchMasks(const std::filesystem::path& path, std::uint64_t seed) {
  Result<LoadedWorld> loaded = loadWorldFile(path);
  if (!loaded) return loaded.error();
  World& world = *loaded->world;
  const double voxel_size = world.voxelSize();

  // Index build (construction timed; the last one is kept for the queries).
  std::unique_ptr<MaskIndex> index;
  std::vector<double> build_ms;
  for (int r = 0; r < 3; ++r) {
    index.reset();
    const auto a = Clock::now();
    Result<std::unique_ptr<MaskIndex>> created = MaskIndex::create(world);
    const auto b = Clock::now();
    if (!created) return created.error();
    index = std::move(*created);
    build_ms.push_back(std::chrono::duration<double, std::milli>(b - a).count());
  }
  const physics::MaskIndexStats stats = index->stats();

  // Every chunk's masks from its box: the MIXED boxes for the build timing, and a check of the index.
  const std::vector<ChunkCoord> near_stored = neighbourhood(world);
  std::vector<Voxel> mixed_boxes;
  bool index_matches_build = true;
  {
    std::vector<Voxel> box(kBoxVoxels);
    for (const ChunkCoord c : near_stored) {
      if (Status st = world.readBox(apronBox(c), box); !st) return st.error();
      Result<ChunkMasks> built = physics::buildChunkMasks(box);
      if (!built) return built.error();
      if (!(index->masks(c) == *built)) index_matches_build = false;
      if (built->tag == MaskTag::kMixed) mixed_boxes.insert(mixed_boxes.end(), box.begin(), box.end());
    }
  }
  const std::size_t mixed_built = mixed_boxes.size() / kBoxVoxels;

  // Build timing: groups of kGroup boxes in one L1-resident buffer, batches cycling over the group.
  std::vector<double> group_ns;
  {
    alignas(64) std::array<Voxel, kGroup * kBoxVoxels> buffer;
    std::uint64_t sink = 0;
    for (std::size_t first = 0; first < mixed_built; first += kGroup) {
      const std::size_t n = std::min(kGroup, mixed_built - first);
      std::memcpy(buffer.data(), mixed_boxes.data() + first * kBoxVoxels, n * kBoxVoxels * sizeof(Voxel));
      group_ns.push_back(medianNsPerCall(
          [&](std::size_t calls) {
            Cycle slot(n);
            for (std::size_t i = 0; i < calls; ++i) {
              Result<ChunkMasks> m = physics::buildChunkMasks(
                  std::span<const Voxel>(buffer.data() + slot.next() * kBoxVoxels, kBoxVoxels));
              sink += m->solid[3] ^ m->water[4];
            }
          },
          kBuildCalls));
    }
    if (sink == 0x5bd1e995u) group_ns.push_back(0);  // keeps the results alive; practically never true
  }
  std::sort(group_ns.begin(), group_ns.end());

  // Surfaces and bodies.
  Result<Surfaces> surfaces_r = meshSurfaces(world);
  if (!surfaces_r) return surfaces_r.error();
  const Surfaces& surfaces = *surfaces_r;
  Result<SolidVoxels> solid = SolidVoxels::read(world);
  if (!solid) return solid.error();
  Rng rng(seed);
  PairCounts air, rest;
  const std::vector<Box3> air_bodies = airborneBodies(surfaces, *solid, rng, air.tries);
  const std::vector<Box3> rest_bodies = restingBodies(surfaces, rng, rest.tries);
  air.bodies = air_bodies.size();
  rest.bodies = rest_bodies.size();
  {
    std::vector<physics::ChunkTouch> touches;
    for (const Box3& b : air_bodies)
      if (Status st = countPairs(b, surfaces, *index, touches, air); !st) return st.error();
    for (const Box3& b : rest_bodies)
      if (Status st = countPairs(b, surfaces, *index, touches, rest); !st) return st.error();
  }

  // Query timing over both kinds of bodies, shuffled.
  std::vector<Box3> query_bodies = air_bodies;
  query_bodies.insert(query_bodies.end(), rest_bodies.begin(), rest_bodies.end());
  std::shuffle(query_bodies.begin(), query_bodies.end(), rng.engine);
  double query_ns = 0, batch_ns = 0, far_ratio = 0;
  bool far_lock_free = false, far_lock_free_after = false;
  std::uint64_t visited = 0;
  if (!query_bodies.empty()) {
    std::vector<physics::Aabb> aabbs;
    for (const Box3& b : query_bodies) {
      aabbs.push_back(worldAabb(b, voxel_size));
      visited += chunksVisited(b);
    }
    std::vector<physics::ChunkTouch> touches;
    touches.reserve(64);
    std::size_t sink = 0;
    const std::size_t calls = std::max<std::size_t>(1000, aabbs.size());
    query_ns = medianNsPerCall(
        [&](std::size_t n) {
          Cycle body(aabbs.size());
          for (std::size_t i = 0; i < n; ++i) {
            (void)index->query(aabbs[body.next()], touches);
            sink += touches.size();
          }
        },
        calls);
    // Batched: kQueryBatch bodies per call, as a server's physics step queries its bodies.
    physics::TouchBatch batch;
    const std::size_t batches = std::max<std::size_t>(1, aabbs.size() / kQueryBatch);
    const std::size_t per_batch = std::min(kQueryBatch, aabbs.size());
    auto timeBatches = [&] {
      return medianNsPerCall(
                 [&](std::size_t n) {
                   Cycle at(batches);
                   for (std::size_t i = 0; i < n; ++i) {
                     const std::span<const physics::Aabb> bodies(aabbs.data() + at.next() * per_batch, per_batch);
                     (void)index->query(bodies, batch);
                     sink += batch.touches(per_batch - 1).size();
                   }
                 },
                 std::max<std::size_t>(1000 / per_batch + 1, batches)) /
             double(per_batch);
    };
    batch_ns = timeBatches();
    // One voxel far from the rest (30000, 0, 30000): the index keeps it beside its grid, and the same queries should
    // take about as long and stay lock-free; the voxel cleared, the index is as before. Timed between two runs
    // without it.
    const VoxelCoord far{30000, 0, 30000};
    const Voxel before = world.voxel(far);
    if (auto st = world.setVoxel(far, Voxel{world.materials().find("rock").value_or(kFirstSolidMaterial), 255}); !st)
      return st.error();
    far_lock_free = index->stats().lock_free;
    const double far_ns = timeBatches();
    if (auto st = world.setVoxel(far, before); !st) return st.error();
    far_lock_free_after = index->stats().lock_free && index->stats().beside_grid == 0;
    const double again_ns = timeBatches();
    far_ratio = far_ns / (0.5 * (batch_ns + again_ns));
    query_ns += double(sink & 0);
  }
  const double bodies_per_batch = double(query_bodies.size());

  // Edits on two fresh copies: one kept current by a MaskIndex, one without.
  Result<LoadedWorld> with_copy = loadWorldFile(path);
  if (!with_copy) return with_copy.error();
  Result<LoadedWorld> without_copy = loadWorldFile(path);
  if (!without_copy) return without_copy.error();
  World& with_world = *with_copy->world;
  World& without_world = *without_copy->world;
  Result<std::unique_ptr<MaskIndex>> kept = MaskIndex::create(with_world);
  if (!kept) return kept.error();
  const std::uint8_t rock = with_world.materials().find("rock").value_or(kFirstSolidMaterial);
  std::vector<double> edit1_with, edit1_without, sphere_with, sphere_without;
  std::vector<ChunkCoord> edited;
  bool edits_ok = true;
  if (!surfaces.chunks.empty()) {
    const double overhead = clockOverheadNs();
    Rng edit_rng(seed ^ 0x9e3779b97f4a7c15ull);
    for (int e = 0; e < kEdits; ++e) {
      const VoxelCoord o = chunkOrigin(surfaces.chunks[edit_rng.index(surfaces.chunks.size())].coord);
      VoxelCoord v;
      if (e % 4 == 0) {
        const std::uint64_t r = edit_rng.engine();
        v = {o.x + ((r & 1) ? 7 : 0), o.y + ((r & 2) ? 7 : 0), o.z + ((r & 4) ? 7 : 0)};
      } else {
        const std::uint64_t r = edit_rng.engine();
        v = {o.x + int(r & 7), o.y + int((r >> 3) & 7), o.z + int((r >> 6) & 7)};
      }
      const Voxel value = isSolidInside(without_world.voxel(v)) ? kAir : Voxel{rock, 255};
      edit1_without.push_back(timedUs([&] { return without_world.setVoxel(v, value).ok(); }, overhead, edits_ok));
      edit1_with.push_back(timedUs([&] { return with_world.setVoxel(v, value).ok(); }, overhead, edits_ok));
      edited.push_back(chunkOf(v));
    }
    for (int e = 0; e < kSphereEdits; ++e) {
      const Surface& s = surfaces.chunks[edit_rng.index(surfaces.chunks.size())];
      const Vec3d centre{edit_rng.uniform(s.aabb.lo[0], s.aabb.hi[0]), edit_rng.uniform(s.aabb.lo[1], s.aabb.hi[1]),
                         edit_rng.uniform(s.aabb.lo[2], s.aabb.hi[2])};
      sphere_without.push_back(
          timedUs([&] { return without_world.fillSphere(centre, kSphereRadius, rock).ok(); }, overhead, edits_ok));
      sphere_with.push_back(
          timedUs([&] { return with_world.fillSphere(centre, kSphereRadius, rock).ok(); }, overhead, edits_ok));
      sphere_without.push_back(
          timedUs([&] { return without_world.clearSphere(centre, kSphereRadius).ok(); }, overhead, edits_ok));
      sphere_with.push_back(
          timedUs([&] { return with_world.clearSphere(centre, kSphereRadius).ok(); }, overhead, edits_ok));
      // The chunks the sphere can have changed, for the consistency check below.
      const ChunkCoord lo = chunkOf({std::int32_t(std::floor(centre.x - kSphereRadius)),
                                     std::int32_t(std::floor(centre.y - kSphereRadius)),
                                     std::int32_t(std::floor(centre.z - kSphereRadius))});
      const ChunkCoord hi = chunkOf({std::int32_t(std::floor(centre.x + kSphereRadius)),
                                     std::int32_t(std::floor(centre.y + kSphereRadius)),
                                     std::int32_t(std::floor(centre.z + kSphereRadius))});
      for (std::int32_t cz = lo.z; cz <= hi.z; ++cz)
        for (std::int32_t cy = lo.y; cy <= hi.y; ++cy)
          for (std::int32_t cx = lo.x; cx <= hi.x; ++cx) edited.push_back({cx, cy, cz});
    }
  }
  if (!edits_ok) return Error{ErrorCode::kInvalidArgument, "an edit of the masks benchmark failed", {}};
  // The kept-current index must equal one built from scratch, over every chunk that has or had an entry.
  bool edit_index_matches = true;
  {
    Result<std::unique_ptr<MaskIndex>> fresh = MaskIndex::create(with_world);
    if (!fresh) return fresh.error();
    for (const ChunkCoord c : neighbourhood(with_world, edited))
      if (!((*kept)->masks(c) == (*fresh)->masks(c))) edit_index_matches = false;
    const physics::MaskIndexStats a = (*kept)->stats(), b = (*fresh)->stats();
    if (a.entries != b.entries || a.mixed != b.mixed || a.full_solid != b.full_solid ||
        a.full_water != b.full_water || a.mask_bytes != b.mask_bytes)
      edit_index_matches = false;
  }

  auto ratio = [](std::uint64_t num, std::uint64_t den) -> nlohmann::json {
    if (den == 0) return nullptr;
    return double(num) / double(den);
  };
  auto orNull = [](bool have, double v) -> nlohmann::json {
    if (!have) return nullptr;
    return v;
  };
  nlohmann::json j;
  j["world"] = jsonText(path.string());
  j["median_ns_per_chunk"] = orNull(!group_ns.empty(), percentile(group_ns, 0.5));
  j["p90_ns_per_chunk"] = orNull(!group_ns.empty(), percentile(group_ns, 0.9));
  j["build_chunks"] = mixed_built;
  j["index_build_ms"] = median(build_ms);
  j["entries"] = stats.entries;
  j["mixed"] = stats.mixed;
  j["full_solid"] = stats.full_solid;
  j["full_water"] = stats.full_water;
  j["mask_bytes"] = stats.mask_bytes;
  j["bits_per_voxel"] = orNull(stats.mixed > 0, double(stats.mask_bytes) * 8.0 / (512.0 * double(stats.mixed)));
  j["index_bytes"] = stats.index_bytes;
  j["index_matches_build"] = index_matches_build;
  const double chunks_per_body = double(visited) / std::max(1.0, bodies_per_batch);
  j["query_ns_per_body"] = orNull(!query_bodies.empty(), batch_ns);
  j["query_ns_per_chunk"] = orNull(visited > 0, visited > 0 ? batch_ns / chunks_per_body : 0);
  j["single_query_ns_per_body"] = orNull(!query_bodies.empty(), query_ns);
  j["single_query_ns_per_chunk"] = orNull(visited > 0, visited > 0 ? query_ns / chunks_per_body : 0);
  j["query_chunks_per_body"] = orNull(!query_bodies.empty(), chunks_per_body);
  j["query_bodies"] = query_bodies.size();
  j["far_voxel_query_ratio"] = orNull(!query_bodies.empty(), far_ratio);
  j["far_voxel_lock_free"] = far_lock_free;
  j["far_voxel_cleared_lock_free"] = far_lock_free_after;
  j["edit_1_us"] = orNull(!edit1_with.empty(), median(edit1_with));
  j["edit_1_without_index_us"] = orNull(!edit1_without.empty(), median(edit1_without));
  j["edit_sphere8_us"] = orNull(!sphere_with.empty(), median(sphere_with));
  j["edit_sphere8_without_index_us"] = orNull(!sphere_without.empty(), median(sphere_without));
  j["edit_index_matches_rebuild"] = edit_index_matches;
  j["false_pair_rejection"] = ratio(air.rejected_false_pairs, air.false_pairs);
  j["chunk_aabb_false_pairs"] = air.false_pairs;
  j["contact_false_pair_rejection"] = ratio(rest.rejected_false_pairs, rest.false_pairs);
  j["violations"] = air.violations + rest.violations;
  j["precision"] = {{"airborne", air.json()}, {"resting", rest.json()}};
  j["target_median_ns_per_chunk"] = 60;
  j["target_query_ns_per_chunk"] = 10;
  j["target_false_pair_rejection"] = 0.95;
  j["timing"] = "build: MIXED boxes in groups of 8 in an L1-resident buffer, batches of 1024 calls cycling over a "
                "group, median of 3, clock overhead subtracted, median over groups; index: median of 3 creates; "
                "query: batched, 256 bodies a call (single: one call per body; airborne and resting, shuffled), "
                "median of 3; edits: each call timed alone, median over 1000 single voxels and 200 radius-8 spheres "
                "(fill then clear)";
  return j;
}

}  // namespace vtp::tools
