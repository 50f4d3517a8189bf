// How the figures are taken:
// - Surface chunks as in the mesh section; each chunk's collider is built from its 10^3 box's mesh, and Bullet's
//   btBvhTriangleMeshShape (quantised, and plain) from the same triangles as float xyz + int32 indices.
// - Build: ColliderBuilder::build from a mesh already in memory (meshing excluded) against btTriangleIndexVertexArray
//   + btBvhTriangleMeshShape(mesh, quantised, true), each chunk timed alone, median of 3 sweeps. Ours is the collider
//   as rays and box gathers get it (ColliderUse::kQueries: no edge flags; Bullet's BVH has none either); the same
//   build with the edge flags is reported beside it, and the contacts' build as the cache runs it (the wide-apron
//   mesh, edge flags) against Bullet's BVH plus btGenerateInternalEdgeInfo, the counterpart of our edge flags.
// - Queries, per chunk with a fixed seed: 64 long rays (from a uniform point of the 1.5x-grown mesh AABB through a
//   uniform point of the AABB, 2 AABB diagonals long), 64 short rays (uniform origin in the AABB, uniform direction,
//   2 voxels), 64 box gathers (2-voxel cubes centred uniformly in the AABB). Ours includes preparing the ray or box
//   from world units. 7 passes; in each pass, chunk by chunk and kind by kind, ours, Bullet quantised and the brute
//   force (our kernel with one leaf: an AVX2 scan of the 16-bit mesh) run their 64 queries back to back, each batch
//   between two clock reads. A pass's ratio is the sum of ours over the sum of theirs; the report gives the median
//   pass, overall and per size bucket (< 64, 64-255, >= 256 triangles).
// - Mismatches: before timing, every query of ours and of Bullet is checked against a double-precision oracle
//   (ray_oracle.h): same hit or miss, |dt| <= 1e-5 of the segment, gathers equal as sets.
#include "collider_bench.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "bullet_chunk.h"
#include "ray_oracle.h"
#include "reference_kd.h"
#include "timing.h"
#include "vtp/mesher/mesh_candidates.h"
#include "vtp/mesher/surface_mesher.h"
#include "vtp/physics/chunk_masks.h"
#include "vtp/physics/collider_builder.h"
#include "vtp/physics/collider_cache.h"
#include "vtp/terrain/world_file.h"

namespace vtp::tools {
namespace {

using namespace vtp::terrain;
using Clock = std::chrono::steady_clock;
using P3 = oracle::P3;

constexpr int kQueries = 64;
constexpr int kPasses = 7;
constexpr int kSweeps = 3;
enum Kind { kLong, kShort, kBox, kBoxVertices, kKinds };
enum Impl { kOurs, kBullet, kBrute, kReferenceKd, kImpls };
constexpr int kBuckets = 3;
const char* const kBucketNames[kBuckets] = {"small", "typical", "large"};
int bucketOf(int triangles) { return triangles < 64 ? 0 : triangles < 256 ? 1 : 2; }

// Chunk c's box with `apron` voxels around it: the mesher's input (kApron), or the cache's box (kWideApron).
VoxelBox apronBox(ChunkCoord c, int apron = mesher::kApron) { return grown(chunkBox(c), apron); }

struct Queries {
  std::vector<physics::Ray> rays[2];           // long, short (world units)
  std::vector<std::array<float, 6>> local[2];  // the same as from/to relative to the chunk origin, for Bullet
  std::vector<std::array<P3, 2>> boxes;        // world units
  std::vector<std::array<float, 6>> local_boxes;
};

struct Chunk {
  std::unique_ptr<physics::Collider> collider, brute, reference_collider;
  std::unique_ptr<ReferenceKd> reference;
  std::unique_ptr<BulletChunk> bullet;
  Queries queries;
  double build_ns = 0, build_with_flags_ns = 0, bullet_q_ns = 0, bullet_plain_ns = 0, reference_ns = 0;
  double cached_build_ns = 0, bullet_edge_info_ns = 0;  // as the collider cache builds; Bullet's internal-edge info
  std::size_t reference_bytes = 0, bullet_edge_info_bytes = 0;
  std::size_t bullet_q_bytes = 0, bullet_plain_bytes = 0;
};

P3 uniformIn(std::mt19937_64& rng, const P3& lo, const P3& hi) {
  P3 p;
  for (std::size_t a = 0; a < 3; ++a) p[a] = std::uniform_real_distribution<double>(lo[a], hi[a])(rng);
  return p;
}

Queries makeQueries(const physics::Collider& c, double voxel_size, std::mt19937_64& rng) {
  const physics::GridBox g = c.bounds();
  const P3 o = oracle::chunkOrigin(c, voxel_size);
  const double s = voxel_size / physics::kGridScale;
  P3 lo, hi, grown_lo, grown_hi;
  double diagonal = 0;
  for (std::size_t a = 0; a < 3; ++a) {
    lo[a] = o[a] + g.min[a] * s;
    hi[a] = o[a] + g.max[a] * s;
    const double mid = (lo[a] + hi[a]) / 2, half = (hi[a] - lo[a]) * 0.75;
    grown_lo[a] = mid - half;
    grown_hi[a] = mid + half;
    diagonal += (hi[a] - lo[a]) * (hi[a] - lo[a]);
  }
  diagonal = std::sqrt(diagonal);
  Queries q;
  auto add = [&](int kind, const P3& from, P3 dir, double length) {
    const double n = std::sqrt(oracle::dot(dir, dir));
    if (n == 0) dir = {0, 1, 0};
    else for (double& x : dir) x /= n;
    q.rays[kind].push_back(physics::Ray{physics::WorldVec3(from), physics::WorldVec3(dir), length});
    std::array<float, 6> l;
    for (std::size_t a = 0; a < 3; ++a) {
      l[a] = float(from[a] - o[a]);
      l[3 + a] = float(from[a] + dir[a] * length - o[a]);
    }
    q.local[kind].push_back(l);
  };
  std::normal_distribution<double> normal;
  for (int i = 0; i < kQueries; ++i) {
    const P3 from = uniformIn(rng, grown_lo, grown_hi), through = uniformIn(rng, lo, hi);
    add(kLong, from, oracle::sub(through, from), 2 * diagonal);
  }
  for (int i = 0; i < kQueries; ++i) add(kShort, uniformIn(rng, lo, hi), {normal(rng), normal(rng), normal(rng)}, 2 * voxel_size);
  for (int i = 0; i < kQueries; ++i) {
    const P3 centre = uniformIn(rng, lo, hi);
    const P3 bmin{centre[0] - voxel_size, centre[1] - voxel_size, centre[2] - voxel_size};
    const P3 bmax{centre[0] + voxel_size, centre[1] + voxel_size, centre[2] + voxel_size};
    q.boxes.push_back({bmin, bmax});
    q.local_boxes.push_back({float(bmin[0] - o[0]), float(bmin[1] - o[1]), float(bmin[2] - o[2]), float(bmax[0] - o[0]),
                             float(bmax[1] - o[1]), float(bmax[2] - o[2])});
  }
  return q;
}

// Our ray batch; returns a checksum so the work is not optimised away.
double oursRays(const physics::Collider& c, const std::vector<physics::Ray>& rays, double voxel_size) {
  double sum = 0;
  physics::RayHit hit;
  physics::ChunkRay prepared;
  for (const physics::Ray& r : rays) {
    if (physics::prepareRay(r, c.chunk(), voxel_size, prepared).ok() && c.closestHit(prepared, hit)) sum += hit.t;
  }
  return sum;
}

double referenceRays(const Chunk& chunk, const std::vector<physics::Ray>& rays, double voxel_size) {
  double sum = 0;
  physics::ChunkRay prepared;
  for (const physics::Ray& r : rays) {
    if (physics::prepareRay(r, chunk.collider->chunk(), voxel_size, prepared).ok()) {
      sum += chunk.reference->closestHit(prepared);
    }
  }
  return sum;
}

double oursBoxes(const physics::Collider& c, const std::vector<std::array<P3, 2>>& boxes, double voxel_size,
                 bool with_vertices) {
  std::array<std::uint16_t, mesher::kMaxTriangles> ids;
  static std::array<std::array<float, 3>, 3 * mesher::kMaxTriangles> vertices;
  double sum = 0;
  physics::GridBox grid;
  for (const auto& b : boxes) {
    if (!physics::gridBoxOf(b[0], b[1], c.chunk(), voxel_size, grid).ok()) continue;
    const int n = with_vertices ? c.gather(grid, ids, vertices, voxel_size) : c.gather(grid, ids);
    sum += n;
    if (with_vertices && n > 0) sum += vertices[0][0];
  }
  return sum;
}

double bulletRays(const BulletChunk& b, const std::vector<std::array<float, 6>>& rays) {
  double sum = 0;
  float fraction;
  int id;
  for (const auto& r : rays)
    if (b.closestHit(r.data(), r.data() + 3, fraction, id)) sum += fraction;
  return sum;
}

double bulletBoxes(const BulletChunk& b, const std::vector<std::array<float, 6>>& boxes, std::vector<int>& ids) {
  double sum = 0;
  for (const auto& q : boxes) {
    b.gather(q.data(), q.data() + 3, ids);
    sum += double(ids.size());
  }
  return sum;
}

double elapsedNs(Clock::time_point a, Clock::time_point b, double overhead) {
  return std::max(0.0, std::chrono::duration<double, std::nano>(b - a).count() - overhead);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

Status benchColliders(const std::filesystem::path& path, std::uint64_t seed, const std::optional<VoxelBox>& only,
                      nlohmann::json& report, std::vector<ChunkRow>& rows, const Progress& progress) {
  Result<LoadedWorld> loaded = loadWorldFile(path);
  if (!loaded) return loaded.error();
  const World& world = *loaded->world;
  const double voxel_size = world.voxelSize();
  installBulletAllocationCounter();

  mesher::SurfaceMesher surface_mesher;
  mesher::ChunkMesh mesh;
  physics::ColliderBuilder builder, brute_builder({8, 0}), published_builder({2, 32});
  std::vector<Chunk> chunks;
  std::vector<std::vector<Voxel>> boxes;
  std::mt19937_64 rng(seed);
  {
    std::vector<Voxel> box(std::size_t(mesher::boxVolume(1)));
    for (const ChunkCoord c : mesher::candidateChunks(world)) {
      if (only) {
        const VoxelBox b = chunkBox(c);
        if (b.max.x <= only->min.x || b.min.x >= only->max.x || b.max.y <= only->min.y || b.min.y >= only->max.y ||
            b.max.z <= only->min.z || b.min.z >= only->max.z) {
          continue;
        }
      }
      if (Status s = world.readBox(apronBox(c), box); !s) return s.error();
      if (auto n = surface_mesher.mesh(box, 1, mesh); !n) return n.error();
      if (mesh.owned_triangle_count == 0) continue;
      Chunk chunk;
      auto built = builder.build(mesh, c);
      auto brute = brute_builder.build(mesh, c);
      if (!built) return built.error();
      if (!brute) return brute.error();
      chunk.collider = std::move(built.value());
      chunk.brute = std::move(brute.value());
      chunk.bullet = std::make_unique<BulletChunk>(*chunk.collider, voxel_size);
      auto published = published_builder.build(mesh, c);
      if (!published) return published.error();
      chunk.reference_collider = std::move(published.value());
      chunk.reference = std::make_unique<ReferenceKd>(*chunk.reference_collider, published_builder.lastKd());
      chunk.queries = makeQueries(*chunk.collider, voxel_size, rng);
      chunks.push_back(std::move(chunk));
      boxes.push_back(box);
    }
  }

  // Per chunk, each step timed alone, median of 3 sweeps: readBox, mesh, mask build, our collider build from the
  // mesh, Bullet's plain and quantised builds from the same triangles. Then the builds with what contacts need, as
  // each side would run them: ours from the wide-apron mesh, as the collider cache builds (chunk-seam edges are then
  // classified against the neighbours' triangles instead of being flagged active), and Bullet's
  // btGenerateInternalEdgeInfo on its quantised shape, the counterpart of our edge flags.
  const double overhead = clockOverheadNs();
  rows.assign(chunks.size(), ChunkRow{});
  // Chunks whose wide-apron mesh owns another number of triangles than their 10^3 mesh (the mesher is seam-exact:
  // none), reported with the cached builds.
  std::size_t other_triangles = 0;
  {
    enum {
      kReadBox, kMesh, kMask, kBuild, kBuildWithFlags, kReference, kBulletPlain, kBulletQuantized, kCachedBuild,
      kEdgeInfo, kSteps
    };
    // The published layout for the reference row: the same kD build with 2-triangle leaves, costed as 12 bytes per
    // node (branches and leaves) over our 16-bit mesh (6 bytes per vertex, 6 per triangle, 1 material byte).
    physics::ColliderBuilder reference_builder({2, 32});
    std::vector<std::array<double, kSteps>> times(chunks.size() * kSweeps);
    std::vector<Voxel> scratch_box(std::size_t(mesher::boxVolume(1)));
    std::vector<Voxel> wide_box(std::size_t(mesher::boxVolume(mesher::kWideApron)));
    mesher::ChunkMesh wide_mesh;
    for (int sweep = 0; sweep < kSweeps; ++sweep) {
      for (std::size_t i = 0; i < chunks.size(); ++i) {
        auto& t = times[i * kSweeps + std::size_t(sweep)];
        const ChunkCoord c = chunks[i].collider->chunk();
        auto step = [&](int which, auto&& fn) {
          const auto a = Clock::now();
          fn();
          const auto b = Clock::now();
          t[std::size_t(which)] = elapsedNs(a, b, overhead);
        };
        step(kReadBox, [&] { (void)world.readBox(apronBox(c), scratch_box); });
        step(kMesh, [&] { (void)surface_mesher.mesh(boxes[i], 1, mesh); });
        step(kMask, [&] { (void)physics::buildChunkMasks(boxes[i]); });
        std::unique_ptr<physics::Collider> rebuilt;
        step(kBuild, [&] { rebuilt = std::move(builder.build(mesh, c, physics::ColliderUse::kQueries).value()); });
        if (sweep == 0) {
          const physics::KdBuild& kd = builder.lastKd();
          rows[i].kd_nodes = int(kd.nodes.size());
          rows[i].kd_depth = physics::kdDepth(kd);
        }
        rebuilt.reset();
        step(kBuildWithFlags, [&] { rebuilt = std::move(builder.build(mesh, c).value()); });
        rebuilt.reset();
        step(kReference,
             [&] { rebuilt = std::move(reference_builder.build(mesh, c, physics::ColliderUse::kQueries).value()); });
        if (sweep == 0) {
          chunks[i].reference_bytes = 12 * reference_builder.lastKd().nodes.size() +
                                      6 * std::size_t(rebuilt->vertexCount()) + 7 * std::size_t(rebuilt->triangleCount());
        }
        rebuilt.reset();
        chunks[i].bullet->release();  // untimed, as our colliders are freed outside their steps
        step(kBulletPlain, [&] { chunks[i].bullet->build(false); });
        chunks[i].bullet_plain_bytes = chunks[i].bullet->bytes();
        chunks[i].bullet->release();
        step(kBulletQuantized, [&] { chunks[i].bullet->build(true); });
        chunks[i].bullet_q_bytes = chunks[i].bullet->bytes();
        if (Status st = world.readBox(apronBox(c, mesher::kWideApron), wide_box); !st) return st.error();
        if (auto n = surface_mesher.mesh(wide_box, mesher::kWideApron, wide_mesh); !n) return n.error();
        step(kCachedBuild, [&] { rebuilt = std::move(builder.build(wide_mesh, c).value()); });
        if (sweep == 0 && rebuilt->triangleCount() != chunks[i].collider->triangleCount()) ++other_triangles;
        rebuilt.reset();
        step(kEdgeInfo, [&] { chunks[i].bullet_edge_info_bytes = chunks[i].bullet->generateEdgeInfo(); });
        if (progress) progress(std::size_t(sweep) * chunks.size() + i + 1, kSweeps * chunks.size() + kPasses * chunks.size());
      }
    }
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      auto med = [&](int which) {
        std::array<double, kSweeps> v;
        for (int k = 0; k < kSweeps; ++k) v[std::size_t(k)] = times[i * kSweeps + std::size_t(k)][std::size_t(which)];
        std::sort(v.begin(), v.end());
        return v[kSweeps / 2];
      };
      Chunk& chunk = chunks[i];
      chunk.build_ns = med(kBuild);
      chunk.build_with_flags_ns = med(kBuildWithFlags);
      chunk.bullet_plain_ns = med(kBulletPlain);
      chunk.bullet_q_ns = med(kBulletQuantized);
      chunk.reference_ns = med(kReference);
      chunk.cached_build_ns = med(kCachedBuild);
      chunk.bullet_edge_info_ns = med(kEdgeInfo);
      ChunkRow& row = rows[i];
      row.chunk = chunk.collider->chunk();
      row.triangles = chunk.collider->triangleCount();
      row.read_box_ns = med(kReadBox);
      row.mesh_ns = med(kMesh);
      row.mask_ns = med(kMask);
      row.build_ns = chunk.build_ns;
      row.leaves = chunk.collider->leafCount();
      row.bytes = chunk.collider->bytes();
      row.bullet_quantized_ns = chunk.bullet_q_ns;
      row.bullet_plain_ns = chunk.bullet_plain_ns;
      row.bullet_quantized_bytes = chunk.bullet_q_bytes;
      row.bullet_plain_bytes = chunk.bullet_plain_bytes;
    }
  }

  // The oracle, once: ours and Bullet's answers to every query.
  std::uint64_t ours_mismatch = 0, bullet_ray_mismatch = 0, bullet_box_superset = 0, bullet_box_missing = 0;
  std::uint64_t checked = 0;
  {
    std::vector<int> bullet_ids;
    std::array<std::uint16_t, mesher::kMaxTriangles> ids;
    for (const Chunk& chunk : chunks) {
      const physics::Collider& c = *chunk.collider;
      for (int kind : {kLong, kShort}) {
        for (std::size_t i = 0; i < chunk.queries.rays[kind].size(); ++i) {
          const physics::Ray& r = chunk.queries.rays[kind][i];
          const oracle::Verdict v = oracle::judge(c, r, voxel_size);
          auto prepared = physics::prepareRay(r, c.chunk(), voxel_size);
          physics::RayHit hit;
          const bool found = prepared && c.closestHit(*prepared, hit);
          if (!prepared || !v.acceptsClosest(found, hit.t, hit.triangle, r.max_t)) ++ours_mismatch;
          if (prepared && c.anyHit(*prepared) != found) ++ours_mismatch;
          float fraction = 0;
          int id = -1;
          const auto& l = chunk.queries.local[kind][i];
          const bool bullet_found = chunk.bullet->closestHit(l.data(), l.data() + 3, fraction, id);
          if (!v.acceptsClosest(bullet_found, double(fraction) * r.max_t, id, r.max_t)) ++bullet_ray_mismatch;
          ++checked;
        }
      }
      for (std::size_t i = 0; i < chunk.queries.boxes.size(); ++i) {
        const auto& b = chunk.queries.boxes[i];
        const std::vector<std::uint16_t> want = oracle::overlapping(c, b[0], b[1], voxel_size);
        auto grid = physics::gridBoxOf(b[0], b[1], c.chunk(), voxel_size);
        const int n = grid ? c.gather(*grid, ids) : -1;
        if (n != int(want.size()) || !std::equal(want.begin(), want.end(), ids.begin())) ++ours_mismatch;
        chunk.bullet->gather(chunk.queries.local_boxes[i].data(), chunk.queries.local_boxes[i].data() + 3, bullet_ids);
        std::sort(bullet_ids.begin(), bullet_ids.end());
        const bool covers = std::includes(bullet_ids.begin(), bullet_ids.end(), want.begin(), want.end());
        if (!covers) ++bullet_box_missing;
        else if (bullet_ids.size() != want.size()) ++bullet_box_superset;
        ++checked;
      }
    }
  }

  // The timed passes: sums per pass, kind, implementation and bucket.
  std::vector<std::array<std::array<std::array<double, kBuckets + 1>, kImpls>, kKinds>> sums(kPasses);
  double checksum = 0;
  std::vector<int> bullet_ids;
  bullet_ids.reserve(4096);
  for (int pass = 0; pass < kPasses; ++pass) {
    if (progress) progress((kSweeps + std::size_t(pass)) * chunks.size(), (kSweeps + kPasses) * chunks.size());
    auto& s = sums[std::size_t(pass)];
    for (auto& k : s)
      for (auto& i : k) i.fill(0);
    for (const Chunk& chunk : chunks) {
      const int bucket = bucketOf(chunk.collider->triangleCount());
      auto timed = [&](int kind, int impl, auto&& fn) {
        const auto a = Clock::now();
        checksum += fn();
        const auto b = Clock::now();
        const double ns = elapsedNs(a, b, overhead);
        s[std::size_t(kind)][std::size_t(impl)][std::size_t(bucket)] += ns;
        s[std::size_t(kind)][std::size_t(impl)][kBuckets] += ns;
      };
      for (int kind : {kLong, kShort}) {
        timed(kind, kOurs, [&] { return oursRays(*chunk.collider, chunk.queries.rays[kind], voxel_size); });
        timed(kind, kBullet, [&] { return bulletRays(*chunk.bullet, chunk.queries.local[kind]); });
        timed(kind, kBrute, [&] { return oursRays(*chunk.brute, chunk.queries.rays[kind], voxel_size); });
        timed(kind, kReferenceKd, [&] { return referenceRays(chunk, chunk.queries.rays[kind], voxel_size); });
      }
      timed(kBox, kOurs, [&] { return oursBoxes(*chunk.collider, chunk.queries.boxes, voxel_size, false); });
      timed(kBox, kBullet, [&] { return bulletBoxes(*chunk.bullet, chunk.queries.local_boxes, bullet_ids); });
      timed(kBoxVertices, kOurs, [&] { return oursBoxes(*chunk.collider, chunk.queries.boxes, voxel_size, true); });
      timed(kBoxVertices, kBullet, [&] { return bulletBoxes(*chunk.bullet, chunk.queries.local_boxes, bullet_ids); });
    }
  }
  // Median over passes of a pass's ratio (of implementation `mine`, ours by default, to `impl`).
  auto ratio = [&](int kind, int impl, int bucket, int mine = kOurs) {
    std::vector<double> r;
    for (const auto& s : sums) {
      const double theirs = s[std::size_t(kind)][std::size_t(impl)][std::size_t(bucket)];
      if (theirs > 0) r.push_back(s[std::size_t(kind)][std::size_t(mine)][std::size_t(bucket)] / theirs);
    }
    return r.empty() ? nlohmann::json(nullptr) : nlohmann::json(median(r));
  };
  auto ns_per_query = [&](int kind, int impl) {
    std::vector<double> v;
    for (const auto& s : sums) v.push_back(s[std::size_t(kind)][std::size_t(impl)][kBuckets]);
    return median(v) / double(std::max<std::size_t>(1, chunks.size() * kQueries));
  };

  std::size_t ours_bytes = 0, bq_bytes = 0, bp_bytes = 0, triangles = 0, leaves = 0, reference_bytes = 0;
  std::size_t edge_info_bytes = 0;
  double build = 0, build_with_flags = 0, bq_build = 0, bp_build = 0, reference_build = 0, cached_build = 0;
  double edge_info = 0;
  std::array<int, kBuckets> bucket_chunks{};
  for (const Chunk& chunk : chunks) {
    ours_bytes += chunk.collider->bytes();
    bq_bytes += chunk.bullet_q_bytes;
    bp_bytes += chunk.bullet_plain_bytes;
    triangles += std::size_t(chunk.collider->triangleCount());
    leaves += std::size_t(chunk.collider->leafCount());
    build += chunk.build_ns;
    build_with_flags += chunk.build_with_flags_ns;
    bq_build += chunk.bullet_q_ns;
    bp_build += chunk.bullet_plain_ns;
    reference_bytes += chunk.reference_bytes;
    reference_build += chunk.reference_ns;
    cached_build += chunk.cached_build_ns;
    edge_info += chunk.bullet_edge_info_ns;
    edge_info_bytes += chunk.bullet_edge_info_bytes;
    ++bucket_chunks[std::size_t(bucketOf(chunk.collider->triangleCount()))];
  }
  const double tri = double(std::max<std::size_t>(1, triangles));
  nlohmann::json collider;
  collider["chunks"] = chunks.size();
  collider["triangles"] = triangles;
  collider["layout"] = "flat SIMD leaf boxes from the loose kD build, leaves of <= 8 triangles";
  collider["leaves"] = leaves;
  collider["bytes_per_triangle"] = double(ours_bytes) / tri;
  collider["build_ns_per_triangle"] = build / tri;
  collider["build_with_edge_flags_ns_per_triangle"] = build_with_flags / tri;
  collider["bullet_quantized_bytes_per_triangle"] = double(bq_bytes) / tri;
  collider["bullet_plain_bytes_per_triangle"] = double(bp_bytes) / tri;
  collider["bullet_quantized_build_ns_per_triangle"] = bq_build / tri;
  collider["bullet_plain_build_ns_per_triangle"] = bp_build / tri;
  collider["as_cached"] = {
      {"what", "our build from the wide-apron mesh, as the collider cache runs it (seam edges classified against the "
               "neighbours' triangles); Bullet's btGenerateInternalEdgeInfo on its quantised shape of the chunk's own "
               "triangles (its seam edges see no neighbour), the counterpart of our edge flags"},
      {"build_ns_per_triangle", cached_build / tri},
      {"bullet_edge_info_ns_per_triangle", edge_info / tri},
      {"bullet_edge_info_bytes_per_triangle", double(edge_info_bytes) / tri},
      {"chunks_with_other_triangles", other_triangles}};
  collider["chunks_by_bucket"] = {{"small", bucket_chunks[0]}, {"typical", bucket_chunks[1]}, {"large", bucket_chunks[2]}};
  collider["ns_per_query"] = {
      {"long_ray", ns_per_query(kLong, kOurs)},          {"short_ray", ns_per_query(kShort, kOurs)},
      {"aabb", ns_per_query(kBox, kOurs)},               {"aabb_with_vertices", ns_per_query(kBoxVertices, kOurs)},
      {"bullet_long_ray", ns_per_query(kLong, kBullet)}, {"bullet_short_ray", ns_per_query(kShort, kBullet)},
      {"bullet_aabb", ns_per_query(kBox, kBullet)},      {"brute_force_long_ray", ns_per_query(kLong, kBrute)}};
  collider["reference"] = {
      {"layout", "published loose kD: 12-byte nodes (branches and leaves), 2-triangle leaves, over our 16-bit mesh"},
      {"bytes_per_triangle", double(reference_bytes) / tri},
      {"build_ns_per_triangle", reference_build / tri},
      {"long_ray_vs_bullet", ratio(kLong, kBullet, kBuckets, kReferenceKd)},
      {"short_ray_vs_bullet", ratio(kShort, kBullet, kBuckets, kReferenceKd)}};
  collider["target_bytes_per_triangle"] = 14;
  collider["checksum"] = checksum;
  collider["timing"] = "builds: each chunk alone, median of 3 sweeps; queries: 7 passes, in each pass ours, Bullet "
                       "quantised and the brute force run each chunk's 64 queries of a kind back to back; ratios are "
                       "per pass (sum of ours / sum of theirs), median pass";

  nlohmann::json ratios;
  ratios["build_vs_bullet_quantized"] = build / std::max(1.0, bq_build);
  ratios["build_vs_bullet_plain"] = build / std::max(1.0, bp_build);
  ratios["build_with_edge_flags_vs_bullet_quantized"] = build_with_flags / std::max(1.0, bq_build);
  ratios["build_as_cached_vs_bullet_quantized"] = cached_build / std::max(1.0, bq_build);
  ratios["build_as_cached_vs_bullet_with_edge_info"] = cached_build / std::max(1.0, bq_build + edge_info);
  ratios["long_ray_vs_bullet"] = ratio(kLong, kBullet, kBuckets);
  ratios["short_ray_vs_bullet"] = ratio(kShort, kBullet, kBuckets);
  ratios["aabb_vs_bullet"] = ratio(kBox, kBullet, kBuckets);
  ratios["aabb_with_vertices_vs_bullet"] = ratio(kBoxVertices, kBullet, kBuckets);
  ratios["long_ray_vs_brute_force"] = ratio(kLong, kBrute, kBuckets);
  for (int b = 0; b < kBuckets; ++b) {
    ratios["by_bucket"][kBucketNames[b]] = {{"long_ray_vs_bullet", ratio(kLong, kBullet, b)},
                                            {"short_ray_vs_bullet", ratio(kShort, kBullet, b)},
                                            {"aabb_vs_bullet", ratio(kBox, kBullet, b)}};
  }
  ratios["targets"] = {{"build_vs_bullet_quantized", 0.08}, {"long_ray_vs_bullet", 0.20}, {"short_ray_vs_bullet", 0.30},
                       {"aabb_vs_bullet", 0.30}, {"aabb_with_vertices_vs_bullet", 0.40}, {"bucket_slack", 1.15}};

  nlohmann::json mismatches;
  mismatches["ours"] = ours_mismatch;
  mismatches["bullet"] = bullet_ray_mismatch + bullet_box_superset + bullet_box_missing;
  mismatches["queries_checked"] = checked;
  mismatches["bullet_detail"] = {
      {"rays", bullet_ray_mismatch},
      {"aabb_supersets", bullet_box_superset},
      {"aabb_missing", bullet_box_missing},
      {"why", "rays: Bullet's triangle test uses an edge tolerance, so rays grazing an edge or passing within its "
              "epsilon disagree with the exact answer; boxes: Bullet tests quantised (rounded outward) node bounds and "
              "reports triangles whose own bounds miss the box"}};

  // The cache: bodies wandering over the surface chunks (each step moves to a chunk within one of the last), each
  // asking for the colliders of its chunk and the 26 around it, with a budget of a quarter of all colliders' bytes; as
  // contacts ask (the default), then as rays ask (ColliderUse::kQueries, no edge flags) on a fresh cache.
  struct Walked {
    physics::ColliderCacheStats stats;
    std::size_t budget = 0;
    double hit_ns = 0, miss_ns = 0;  // per hit, per miss
  };
  auto walkCache = [&](physics::ColliderUse use) -> Result<Walked> {
    auto cache = physics::ColliderCache::create(*loaded->world, {std::max<std::size_t>(ours_bytes / 4, 1)});
    if (!cache) return cache.error();
    std::mt19937_64 walk(seed + 1);
    constexpr int kBodies = 64, kSteps = 200;
    std::vector<ChunkCoord> at(kBodies);
    for (ChunkCoord& c : at) c = chunks[walk() % chunks.size()].collider->chunk();
    double hit_ns = 0, miss_ns = 0;
    std::uint64_t hits = 0, misses = 0;
    for (int step = 0; step < kSteps; ++step) {
      for (ChunkCoord& c : at) {
        c = {c.x + int(walk() % 3) - 1, c.y + int(walk() % 3) - 1, c.z + int(walk() % 3) - 1};
        for (int dz = -1; dz <= 1; ++dz)
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              const auto before = (*cache)->stats().misses;
              const auto a = Clock::now();
              auto pin = (*cache)->acquire({c.x + dx, c.y + dy, c.z + dz}, use);
              const auto b = Clock::now();
              if (!pin) return pin.error();
              const bool missed = (*cache)->stats().misses != before;
              (missed ? miss_ns : hit_ns) += elapsedNs(a, b, overhead);
              ++(missed ? misses : hits);
            }
      }
    }
    return Walked{(*cache)->stats(), (*cache)->byteBudget(), hits ? hit_ns / double(hits) : 0.0,
                  misses ? miss_ns / double(misses) : 0.0};
  };
  nlohmann::json cache_json;  // null for a region without a surface chunk: there is nothing to walk over
  if (!chunks.empty()) {
    Result<Walked> contacts = walkCache(physics::ColliderUse::kContacts);
    if (!contacts) return contacts.error();
    Result<Walked> queries = walkCache(physics::ColliderUse::kQueries);
    if (!queries) return queries.error();
    const physics::ColliderCacheStats& cs = contacts->stats;
    cache_json = {{"budget_bytes", contacts->budget},
                  {"bytes", cs.bytes},
                  {"entries", cs.entries},
                  {"hits", cs.hits},
                  {"misses", cs.misses},
                  {"builds", cs.builds},
                  {"upgrades", cs.upgrades},
                  {"evictions", cs.evictions},
                  {"invalidations", cs.invalidations},
                  {"overflow_builds", cs.overflow_builds},
                  {"stale_builds", cs.stale_builds},
                  {"hit_rate", double(cs.hits) / double(std::max<std::uint64_t>(1, cs.hits + cs.misses))},
                  {"hit_ns", contacts->hit_ns},
                  {"miss_us", contacts->miss_ns / 1000.0},
                  {"queries_miss_us", queries->miss_ns / 1000.0},
                  {"workload", "64 bodies random-walking over chunks for 200 steps, each acquiring its 27 chunks; "
                               "budget a quarter of all colliders' bytes; a miss reads, meshes and builds (for "
                               "contacts: the 12^3 box, with edge flags; queries_miss_us: the same walk acquiring for "
                               "rays and box gathers, the 10^3 box without edge flags)"}};
  }

  report["collider"] = collider;
  report["cache"] = cache_json;
  report["ratios"] = ratios;
  report["mismatches"] = mismatches;
  return {};
}

}  // namespace vtp::tools
