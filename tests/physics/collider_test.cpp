// Colliders against brute force: the structure holds every triangle once in a leaf whose box contains it; closest,
// any and all hits agree with a double-precision Möller–Trumbore over every triangle on random long, short and
// inside-the-solid rays (hit or miss, |dt| <= 1e-5 of the segment); rays fired exactly through shared edges and
// vertices, on chunk seams too, never slip through; box gathers equal the exact overlap set; bad input is refused.
#include "vtp/physics/collider.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "physics/mask_reference.h"
#include "support/collider_fingerprint.h"
#include "ray_oracle.h"
#include "support/random_world.h"
#include "vtp/physics/collider_builder.h"
#include "query/world_frame_ray.h"  // physics/src (white-box)

using namespace vtp::terrain;
using namespace vtp::physics;
using P3 = std::array<double, 3>;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Built {
  ChunkCoord chunk;
  std::unique_ptr<Collider> collider;
};

// Every chunk near a stored one that owns triangles.
std::vector<Built> buildAll(const World& world, KdBuildOptions options = {kLeafTriangles, 32}) {
  ColliderBuilder builder(options);
  std::vector<Built> out;
  for (const ChunkCoord c : vtp::test::chunksNearStored(world)) {
    auto collider = vtp::test::freshCollider(world, c, builder);
    if (collider->triangleCount() > 0) out.push_back({c, std::move(collider)});
  }
  return out;
}

using vtp::oracle::cross;
using vtp::oracle::dot;
using vtp::oracle::sub;
using vtp::oracle::worldTriangle;

// Checks every ray query of `c` on `ray` against the oracle; returns the number of disagreements.
int checkRay(const Collider& c, const Ray& ray, double voxel_size) {
  auto prepared = prepareRay(ray, c.chunk(), voxel_size);
  REQUIRE(prepared.ok());
  const vtp::oracle::Verdict o = vtp::oracle::judge(c, ray, voxel_size);
  RayHit hit;
  const bool found = c.closestHit(*prepared, hit);
  int mismatches = 0;
  if (!o.acceptsClosest(found, hit.t, hit.triangle, ray.max_t)) ++mismatches;
  if (c.anyHit(*prepared) != found) ++mismatches;
  std::array<RayHit, 64> all;
  const int n = c.allHits(*prepared, all);
  if (n < int(o.sure.size()) || n > int(o.maybe.size())) ++mismatches;
  for (int i = 0; i < std::min<int>(n, int(all.size())); ++i) {
    if (i > 0 && all[std::size_t(i)].t < all[std::size_t(i - 1)].t) ++mismatches;
    if (!std::binary_search(o.maybe.begin(), o.maybe.end(), all[std::size_t(i)].triangle)) ++mismatches;
  }
  if (found && n > 0 && all[0].t != hit.t) ++mismatches;
  return mismatches;
}

P3 uniformIn(std::mt19937_64& rng, const P3& lo, const P3& hi) {
  P3 p;
  for (int a = 0; a < 3; ++a) p[std::size_t(a)] = std::uniform_real_distribution<double>(lo[std::size_t(a)], hi[std::size_t(a)])(rng);
  return p;
}

void worldBounds(const Collider& c, double voxel_size, P3& lo, P3& hi) {
  const GridBox b = c.bounds();
  const double s = voxel_size / kGridScale;
  const ChunkCoord k = c.chunk();
  const double o[3] = {8.0 * k.x * voxel_size, 8.0 * k.y * voxel_size, 8.0 * k.z * voxel_size};
  for (int a = 0; a < 3; ++a) {
    lo[std::size_t(a)] = o[a] + b.min[std::size_t(a)] * s;
    hi[std::size_t(a)] = o[a] + b.max[std::size_t(a)] * s;
  }
}

std::unique_ptr<World> randomWorld(std::uint64_t seed, double voxel_size, int edits) {
  WorldConfig config;
  config.voxel_size = voxel_size;
  auto world = vtp::test::makeWorld(std::move(config));
  std::mt19937_64 rng(seed);
  vtp::test::randomEdits(*world, VoxelBox{{-13, -11, -13}, {13, 11, 13}}, edits, rng);
  return world;
}

}  // namespace

TEST_CASE("collider: every triangle once, in a leaf whose box holds it, the mesh's geometry kept") {
  for (const int leaf : {1, 2, 8, 16}) {
    auto world = randomWorld(11, 1.0, 40);
    vtp::mesher::SurfaceMesher mesher;
    vtp::mesher::ChunkMesh mesh;
    ColliderBuilder builder({leaf, 32});
    int chunks = 0;
    for (const Built& b : buildAll(*world, {leaf, 32})) {
      const Collider& c = *b.collider;
      REQUIRE(mesher.mesh(vtp::test::readMaskBox(*world, b.chunk), vtp::mesher::kApron, mesh).ok());
      REQUIRE(c.triangleCount() == mesh.triangle_count);
      // The same triangles as a multiset (corners in order, materials too).
      std::multiset<std::array<int, 10>> want, got;
      for (int t = 0; t < mesh.triangle_count; ++t) {
        std::array<int, 10> k{};
        for (int i = 0; i < 3; ++i) {
          const auto& v = mesh.vertices[mesh.indices[std::size_t(3 * t + i)]];
          k[std::size_t(3 * i)] = v.x, k[std::size_t(3 * i + 1)] = v.y, k[std::size_t(3 * i + 2)] = v.z;
        }
        k[9] = mesh.materials[std::size_t(t)];
        want.insert(k);
      }
      int covered = 0;
      for (int l = 0; l < c.leafCount(); ++l) {
        const auto [first, last] = c.leafTriangles(l);
        CHECK(first == covered);
        CHECK(last > first);
        CHECK(last - first <= std::max(leaf, 1));
        covered = last;
        const GridBox box = c.leafBounds(l);
        for (int t = first; t < last; ++t) {
          const ColliderTriangle tri = c.triangle(t);
          std::array<int, 10> k{};
          for (int i = 0; i < 3; ++i) {
            const auto& v = tri.vertices[std::size_t(i)];
            const int p[3] = {v.x, v.y, v.z};
            for (int a = 0; a < 3; ++a) {
              CHECK(p[a] >= box.min[std::size_t(a)]);
              CHECK(p[a] <= box.max[std::size_t(a)]);
              CHECK(p[a] >= c.bounds().min[std::size_t(a)]);
              CHECK(p[a] <= c.bounds().max[std::size_t(a)]);
              k[std::size_t(3 * i + a)] = p[a];
            }
          }
          k[9] = tri.material;
          got.insert(k);
        }
      }
      CHECK(covered == c.triangleCount());
      CHECK(want == got);
      // Bytes: the object plus one allocation: leaf boxes and starts, positions, corner offsets and their padding,
      // materials.
      const std::size_t groups = std::size_t(c.leafCount() + kLeafGroup - 1) / kLeafGroup;
      CHECK(c.bytes() == sizeof(Collider) + 96 * groups + 2 * std::size_t(c.leafCount() + 1) +
                             6 * std::size_t(c.vertexCount()) + 7 * std::size_t(c.triangleCount()) +
                             2 * kCornerPadding);
      ++chunks;
    }
    CHECK(chunks > 20);
  }
}

TEST_CASE("collider: random rays agree with a double-precision oracle (voxel sizes 1 and 0.37, negative coords)") {
  // Leaves of 8 (the default) and of 2 (many more leaf groups per chunk).
  for (const auto& [voxel_size, leaf] : {std::pair{1.0, 8}, std::pair{0.37, 8}, std::pair{1.0, 2}}) {
    auto world = randomWorld(23, voxel_size, 50);
    std::mt19937_64 rng(7);
    int rays = 0, mismatches = 0, hits = 0;
    for (const Built& b : buildAll(*world, {leaf, 32})) {
      const Collider& c = *b.collider;
      P3 lo, hi;
      worldBounds(c, voxel_size, lo, hi);
      P3 glo, ghi;  // 1.5x grown
      double diagonal = 0;
      for (int a = 0; a < 3; ++a) {
        const double half = (hi[std::size_t(a)] - lo[std::size_t(a)]) * 0.75 + 0.01;
        const double mid = (hi[std::size_t(a)] + lo[std::size_t(a)]) / 2;
        glo[std::size_t(a)] = mid - half;
        ghi[std::size_t(a)] = mid + half;
        diagonal += (hi[std::size_t(a)] - lo[std::size_t(a)]) * (hi[std::size_t(a)] - lo[std::size_t(a)]);
      }
      diagonal = std::sqrt(diagonal) + voxel_size;
      for (int i = 0; i < 24; ++i) {
        // Long: from the grown box through a point inside, 2 diagonals long (unit direction).
        const P3 from = uniformIn(rng, glo, ghi), through = uniformIn(rng, lo, hi);
        P3 d = sub(through, from);
        const double len = std::sqrt(dot(d, d));
        if (len == 0) continue;
        for (double& x : d) x /= len;
        mismatches += checkRay(c, Ray{WorldVec3(from), WorldVec3(d), 2 * diagonal}, voxel_size);
        // Short: 2 voxels in a uniform direction from a point inside (often inside the solid).
        P3 e = uniformIn(rng, {-1, -1, -1}, {1, 1, 1});
        const Ray s{WorldVec3(uniformIn(rng, lo, hi)), WorldVec3(e), 2 * voxel_size / std::sqrt(dot(e, e))};
        mismatches += checkRay(c, s, voxel_size);
        RayHit h;
        auto pr = prepareRay(s, c.chunk(), voxel_size);
        REQUIRE(pr.ok());
        hits += c.closestHit(*pr, h) ? 1 : 0;
        rays += 2;
      }
    }
    CHECK(rays > 1000);
    CHECK(hits > rays / 20);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("collider: rays exactly through shared edges and vertices, on seams too, always hit") {
  // Voxel size 1 and grid-point origins: every ray below passes exactly through its target edge midpoint or vertex.
  auto world = randomWorld(31, 1.0, 40);
  const auto built = buildAll(*world);
  // World grid coordinates of each triangle's corners, and the chunks owning each undirected edge.
  struct Key {
    std::array<std::int64_t, 3> p;
    auto operator<=>(const Key&) const = default;
  };
  std::map<std::pair<Key, Key>, std::vector<std::size_t>> edges;  // edge -> colliders (index into built)
  std::map<Key, P3> vertices;  // sum of the unit normals of the triangles around
  std::map<std::pair<Key, Key>, P3> normals;  // sum of the two triangles' normals
  for (std::size_t ci = 0; ci < built.size(); ++ci) {
    const Collider& c = *built[ci].collider;
    const ChunkCoord k = c.chunk();
    for (int id = 0; id < c.triangleCount(); ++id) {
      const ColliderTriangle t = c.triangle(id);
      std::array<Key, 3> w;
      for (int i = 0; i < 3; ++i) {
        const auto& v = t.vertices[std::size_t(i)];
        constexpr std::int64_t kSide = kChunkSize * kGridScale;
        w[std::size_t(i)] = {{k.x * kSide + v.x, k.y * kSide + v.y, k.z * kSide + v.z}};
      }
      const P3 n = cross(sub({double(w[1].p[0]), double(w[1].p[1]), double(w[1].p[2])},
                             {double(w[0].p[0]), double(w[0].p[1]), double(w[0].p[2])}),
                         sub({double(w[2].p[0]), double(w[2].p[1]), double(w[2].p[2])},
                             {double(w[0].p[0]), double(w[0].p[1]), double(w[0].p[2])}));
      const double len = std::sqrt(dot(n, n));
      for (int i = 0; i < 3; ++i) {
        P3& vn = vertices[w[std::size_t(i)]];
        for (int a = 0; a < 3; ++a) vn[std::size_t(a)] += n[std::size_t(a)] / len;
        auto e = std::minmax(w[std::size_t(i)], w[std::size_t((i + 1) % 3)]);
        edges[{e.first, e.second}].push_back(ci);
        P3& s = normals[{e.first, e.second}];
        for (int a = 0; a < 3; ++a) s[std::size_t(a)] += n[std::size_t(a)] / len;
      }
    }
  }
  std::mt19937_64 rng(5);
  // Every hit of every collider (the ray may pass through neighbours first): whether one lies at t = 1 (the ray's
  // target, an edge or vertex of the surface) within `tolerance`.
  std::array<RayHit, 64> all;
  auto hitsTarget = [&](const P3& origin_grid, const P3& target_grid, double tolerance) {
    constexpr double g = kGridScale;
    const Ray ray{{origin_grid[0] / g, origin_grid[1] / g, origin_grid[2] / g},
                  {(target_grid[0] - origin_grid[0]) / g, (target_grid[1] - origin_grid[1]) / g,
                   (target_grid[2] - origin_grid[2]) / g},
                  1.5};
    bool at_target = false;
    for (const Built& b : built) {
      auto pr = prepareRay(ray, b.chunk, 1.0);
      REQUIRE(pr.ok());
      const int n = std::min<int>(b.collider->allHits(*pr, all), int(all.size()));
      for (int i = 0; i < n; ++i) at_target = at_target || std::abs(all[std::size_t(i)].t - 1.0) <= tolerance;
    }
    return at_target;
  };
  int edge_rays = 0, seam_edges = 0, misses = 0;
  for (const auto& [e, owners] : edges) {
    if (owners.size() != 2 || edge_rays >= 3000) continue;  // interior manifold edges
    const bool seam = owners[0] != owners[1];
    if (!seam && rng() % 4 != 0) continue;
    // Midpoint in half grid units, scaled by 2 to stay exact; origin off the surface along the normal by whole units.
    const P3 mid{double(e.first.p[0] + e.second.p[0]) / 2, double(e.first.p[1] + e.second.p[1]) / 2,
                 double(e.first.p[2] + e.second.p[2]) / 2};
    const P3& n = normals.at(e);
    for (const double side : {1.0, -1.0}) {
      P3 origin;
      for (int a = 0; a < 3; ++a) {
        origin[std::size_t(a)] = mid[std::size_t(a)] + std::round(side * 60 * n[std::size_t(a)]) +
                                 double(std::int64_t(rng() % 31) - 15);
      }
      if (origin == mid) continue;
      if (!hitsTarget(origin, mid, 1e-6)) ++misses;
      // The same ray moved by a fraction of a grid unit, and by 1e-7 of one (origins off the grid: a float fraction
      // in every chunk, tiny near a seam plane): the surface is still crossed next to the edge.
      for (const double f : {1e-7, 0.3}) {
        const P3 shift{f * 1.061, f * 0.906, f * 0.471};
        const bool hit = hitsTarget({origin[0] + shift[0], origin[1] + shift[1], origin[2] + shift[2]},
                                    {mid[0] + shift[0], mid[1] + shift[1], mid[2] + shift[2]}, f < 1e-3 ? 1e-5 : 0.05);
        if (!hit) ++misses;
      }
      ++edge_rays;
      seam_edges += seam ? 1 : 0;
    }
  }
  // Rays at vertices from either side along the mean normal, `distance` grid units away, jittered by up to `jitter`
  // units (a ray merely grazing a vertex may miss it): at most 1,500 of them, from every third vertex. Returns the
  // rays cast and how many missed their vertex by more than `tolerance` in t.
  auto castAtVertices = [&](double distance, int jitter, double tolerance) {
    int rays = 0, missed = 0;
    for (const auto& [v, n] : vertices) {
      if (rays >= 1500 || rng() % 3 != 0 || dot(n, n) < 1.0) continue;
      const P3 target{double(v.p[0]), double(v.p[1]), double(v.p[2])};
      const double len = std::sqrt(dot(n, n));
      for (const double side : {1.0, -1.0}) {
        P3 origin;
        for (int a = 0; a < 3; ++a) {
          origin[std::size_t(a)] = target[std::size_t(a)] + std::round(side * distance * n[std::size_t(a)] / len) +
                                   double(std::int64_t(rng() % std::uint64_t(2 * jitter + 1)) - jitter);
        }
        if (origin == target) continue;
        if (!hitsTarget(origin, target, tolerance)) ++missed;
        ++rays;
      }
    }
    return std::pair{rays, missed};
  };
  const auto [vertex_rays, vertex_misses] = castAtVertices(60, 10, 1e-6);
  misses += vertex_misses;
  // Vertices again, from origins 60,000 voxels away (about 2^26 grid units: vertex minus origin no longer converts
  // to float exactly, so the slab test's margin has to grow with the distance; with a fixed one-unit margin 2 of
  // these rays missed). Every vertex lies on its leaves' box faces, where a dropped leaf would show.
  const auto [far_rays, far_misses] = castAtVertices(60000.0 * kGridScale, 1000, 1e-5);
  CHECK(edge_rays > 1000);
  CHECK(seam_edges > 50);
  CHECK(vertex_rays > 500);
  CHECK(far_rays > 500);
  CHECK(misses == 0);
  CHECK(far_misses == 0);
}

TEST_CASE("collider: a ray starting inside the solid reports the surface it leaves") {
  auto world = vtp::test::makeWorld();
  // Rock below y = 4 over chunks x, z in -1..0 (the origin is inside, 2.5 voxels deep).
  REQUIRE(world->fillBox(VoxelBox{{-8, -8, -8}, {8, 4, 8}}, 2).ok());
  ColliderBuilder builder;
  auto collider = vtp::test::freshCollider(*world, {-1, 0, -1}, builder);
  REQUIRE(collider->triangleCount() > 0);
  auto ray = prepareRay(Ray{{-3.5, 1.5, -4.5}, {0, 1, 0}, 10}, {-1, 0, -1}, 1.0);
  REQUIRE(ray.ok());
  RayHit hit;
  REQUIRE(collider->closestHit(*ray, hit));
  CHECK(hit.t == doctest::Approx(2.5).epsilon(0.01));
  CHECK_FALSE(hit.front_face);
  CHECK(hit.normal[1] > 0.99f);
  CHECK(hit.point[1] == doctest::Approx(4.0).epsilon(0.01));
  // From above, looking down: the same surface, entered.
  auto down = prepareRay(Ray{{-3.5, 6.5, -4.5}, {0, -1, 0}, 10}, {-1, 0, -1}, 1.0);
  REQUIRE(down.ok());
  REQUIRE(collider->closestHit(*down, hit));
  CHECK(hit.front_face);
  CHECK(hit.t == doctest::Approx(2.5).epsilon(0.01));
  // The direction's length does not matter: scaled by 1e-30 or 1e20 (max_t scaled back), the same hit, t scaled.
  for (const double scale : {1e-30, 1e-3, 1e20}) {
    auto scaled = prepareRay(Ray{{-3.5, 6.5, -4.5}, {0, -scale, 0}, 10 / scale}, {-1, 0, -1}, 1.0);
    REQUIRE(scaled.ok());
    RayHit h;
    REQUIRE(collider->closestHit(*scaled, h));
    CHECK(h.t * scale == doctest::Approx(2.5).epsilon(1e-6));
    CHECK(h.point[1] == doctest::Approx(4.0).epsilon(1e-6));
  }
  // A ray starting on the surface: the hit at t = 0 is +0 and sorts first.
  auto on = prepareRay(Ray{{-3.5, 4.0, -4.5}, {0, -1, 0}, 10}, {-1, 0, -1}, 1.0);
  REQUIRE(on.ok());
  std::array<RayHit, 8> hits;
  const int n = collider->allHits(*on, hits);
  REQUIRE(n >= 1);
  CHECK(hits[0].t == 0.0);
  CHECK_FALSE(std::signbit(hits[0].t));
  for (int i = 1; i < std::min(n, 8); ++i) CHECK(hits[std::size_t(i)].t >= hits[std::size_t(i - 1)].t);
  // A segment ending short of the surface misses.
  auto short_ray = prepareRay(Ray{{-3.5, 6.5, -4.5}, {0, -1, 0}, 2.0}, {-1, 0, -1}, 1.0);
  REQUIRE(short_ray.ok());
  CHECK_FALSE(collider->anyHit(*short_ray));
}

TEST_CASE("collider: box gathers equal the exact overlap set, with vertices") {
  // As for rays: leaves of 8 and of 2.
  for (const auto& [voxel_size, leaf] : {std::pair{1.0, 8}, std::pair{0.5, 8}, std::pair{1.0, 2}}) {
    auto world = randomWorld(41, voxel_size, 40);
    std::mt19937_64 rng(3);
    int queries = 0, nonempty = 0;
    for (const Built& b : buildAll(*world, {leaf, 32})) {
      const Collider& c = *b.collider;
      const ChunkCoord k = c.chunk();
      const P3 origin = vtp::oracle::chunkOrigin(c, voxel_size);
      P3 lo, hi;
      worldBounds(c, voxel_size, lo, hi);
      for (int i = 0; i < 32; ++i) {
        const P3 centre = uniformIn(rng, sub(lo, {voxel_size, voxel_size, voxel_size}), {hi[0] + voxel_size, hi[1] + voxel_size, hi[2] + voxel_size});
        // Tiny, body-sized, large, and huge (past the int16 grid: the query box is clamped).
        const double half = voxel_size * (i % 5 == 0 ? 0.01 : i % 5 == 1 ? 1.0 : i % 5 == 2 ? 3.0 : i % 5 == 3 ? 20.0 : 3e4);
        const P3 bmin{centre[0] - half, centre[1] - half, centre[2] - half};
        const P3 bmax{centre[0] + half, centre[1] + half, centre[2] + half};
        auto grid = gridBoxOf(bmin, bmax, k, voxel_size);
        REQUIRE(grid.ok());
        const std::vector<std::uint16_t> want = vtp::oracle::overlapping(c, bmin, bmax, voxel_size);
        std::vector<std::uint16_t> ids(want.size() + 4);
        std::vector<std::array<float, 3>> verts(3 * ids.size());
        const int n = c.gather(*grid, ids, verts, voxel_size);
        REQUIRE(n == int(want.size()));
        ids.resize(std::size_t(n));
        CHECK(ids == want);
        for (int j = 0; j < n; ++j) {
          const auto v = worldTriangle(c, ids[std::size_t(j)], voxel_size);
          for (int corner = 0; corner < 3; ++corner)
            for (int a = 0; a < 3; ++a)
              CHECK(double(verts[std::size_t(3 * j + corner)][std::size_t(a)]) ==
                    doctest::Approx(v[std::size_t(corner)][std::size_t(a)] - origin[std::size_t(a)]).epsilon(1e-6));
        }
        // Ids only, with room to spare: here a leaf lying inside the box is appended whole (with vertices every
        // triangle is tested); the same set.
        std::vector<std::uint16_t> only_ids(want.size() + 8);
        REQUIRE(c.gather(*grid, only_ids) == n);
        only_ids.resize(std::size_t(n));
        CHECK(only_ids == want);
        // A short buffer: the count is still the total, the prefix is written.
        if (n > 1) {
          std::vector<std::uint16_t> few(1);
          CHECK(c.gather(*grid, few) == n);
          CHECK(few[0] == want[0]);
        }
        ++queries;
        nonempty += n > 0 ? 1 : 0;
      }
    }
    CHECK(queries > 500);
    CHECK(nonempty > queries / 4);
  }
}

TEST_CASE("collider: box gathers into short buffers write what fits and nothing past either span") {
  // ids and vertices spans of every size around the count, vertices shorter than 3 per id and not a multiple of 3:
  // the count is still the total, the ids that fit are written, and the vertices of those whose 3 entries fit; the
  // entries past each span (canaries) are never touched. (Found in review: the tests only passed 3 vertices per id,
  // so dropping either guard on the vertices' room passed them.)
  constexpr double kVoxel = 1.0;
  auto world = randomWorld(43, kVoxel, 40);
  std::mt19937_64 rng(5);
  constexpr std::uint16_t kIdCanary = 0xBEEF;
  constexpr float kVertexCanary = -12345.0f;
  constexpr std::size_t kCanaries = 48;
  int checked = 0;
  for (const Built& b : buildAll(*world, {kLeafTriangles, 32})) {
    const Collider& c = *b.collider;
    const P3 origin = vtp::oracle::chunkOrigin(c, kVoxel);
    P3 lo, hi;
    worldBounds(c, kVoxel, lo, hi);
    for (int i = 0; i < 4; ++i) {
      const P3 centre = uniformIn(rng, lo, hi);
      const double half = i % 2 == 0 ? 1.0 : 3.0;
      const P3 bmin{centre[0] - half, centre[1] - half, centre[2] - half};
      const P3 bmax{centre[0] + half, centre[1] + half, centre[2] + half};
      auto grid = gridBoxOf(bmin, bmax, c.chunk(), kVoxel);
      REQUIRE(grid.ok());
      const std::vector<std::uint16_t> want = vtp::oracle::overlapping(c, bmin, bmax, kVoxel);
      const std::size_t n = want.size();
      for (const std::size_t id_size : {std::size_t(0), std::size_t(1), n / 2, n, n + 8}) {
        for (const std::size_t vertex_size : {std::size_t(0), std::size_t(1), std::size_t(4), 3 * id_size / 2 + 1,
                                              3 * id_size - std::min<std::size_t>(3 * id_size, 1), 3 * n + 24}) {
          std::vector<std::uint16_t> ids(id_size + kCanaries, kIdCanary);
          constexpr std::array<float, 3> kCanary{kVertexCanary, kVertexCanary, kVertexCanary};
          std::vector<std::array<float, 3>> verts(vertex_size + kCanaries, kCanary);
          const int count = c.gather(*grid, std::span(ids).first(id_size), std::span(verts).first(vertex_size), kVoxel);
          REQUIRE(count == int(n));
          const std::size_t written = std::min(n, id_size);
          CHECK(std::equal(want.begin(), want.begin() + std::ptrdiff_t(written), ids.begin()));
          for (std::size_t j = 0; j < written && 3 * j + 2 < vertex_size; ++j) {
            const auto v = worldTriangle(c, ids[j], kVoxel);
            for (std::size_t corner = 0; corner < 3; ++corner)
              for (std::size_t a = 0; a < 3; ++a)
                CHECK(double(verts[3 * j + corner][a]) == doctest::Approx(v[corner][a] - origin[a]).epsilon(1e-6));
          }
          CHECK(std::count(ids.begin() + std::ptrdiff_t(id_size), ids.end(), kIdCanary) == std::ptrdiff_t(kCanaries));
          CHECK(std::count(verts.begin() + std::ptrdiff_t(vertex_size), verts.end(), kCanary) ==
                std::ptrdiff_t(kCanaries));
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 1000);
}

TEST_CASE("collider: bad rays and boxes are refused") {
  const ChunkCoord c{0, 0, 0};
  // The error's code: a malformed ray or box is kInvalidArgument even where it is also far away; a well-formed one
  // reaching 2^16 voxels from the origin (or a chunk beyond) is kOutOfRange.
  using vtp::ErrorCode;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const ChunkCoord far_chunk{1 << 20, 0, 0};
  auto rayCode = [](const Ray& ray, ChunkCoord chunk, double voxel_size) {
    const auto r = prepareRay(ray, chunk, voxel_size);
    return r.ok() ? std::optional<ErrorCode>{} : std::optional<ErrorCode>{r.error().code};
  };
  CHECK(rayCode(Ray{{kNaN, 0, 0}, {1, 0, 0}, 1}, c, 1.0) == ErrorCode::kInvalidArgument);
  CHECK(rayCode(Ray{{kNaN, 0, 0}, {1, 0, 0}, 1}, far_chunk, 1.0) == ErrorCode::kInvalidArgument);
  CHECK(rayCode(Ray{{0, 0, 0}, {0, 0, 0}, 1}, c, 1.0) == ErrorCode::kInvalidArgument);
  // Directions too small for t to be finite (t = s x voxel_size / 1024 / the largest component); 1e-300 works.
  CHECK(rayCode(Ray{{0.5, 0, 0.5}, {0, -5e-324, 0}, 1e308}, c, 1.0) == ErrorCode::kInvalidArgument);
  CHECK(rayCode(Ray{{0.5, 0, 0.5}, {1e-320, -5e-324, 0}, 1e300}, c, 1.0) == ErrorCode::kInvalidArgument);
  CHECK(rayCode(Ray{{0.5, 0, 0.5}, {0, -1e-310, 0}, 1e300}, c, 1000.0) == ErrorCode::kInvalidArgument);
  CHECK(rayCode(Ray{{0.5, 0, 0.5}, {0, -1e-300, 0}, 1e300}, c, 1.0) == std::nullopt);
  CHECK(rayCode(Ray{{0, 0, 0}, {1, 0, 0}, -1}, c, 1.0) == ErrorCode::kInvalidArgument);
  CHECK(rayCode(Ray{{0, 0, 0}, {1, 0, 0}, kNaN}, c, 1.0) == ErrorCode::kInvalidArgument);
  CHECK(rayCode(Ray{{0, 0, 0}, {1, 0, 0}, kInf}, c, 1.0) == ErrorCode::kInvalidArgument);
  CHECK(rayCode(Ray{{0, 0, 0}, {1, kInf, 0}, 1}, c, 1.0) == ErrorCode::kInvalidArgument);
  CHECK(rayCode(Ray{{1e6, 0, 0}, {1, kInf, 0}, 1}, c, 1.0) == ErrorCode::kInvalidArgument);
  CHECK(rayCode(Ray{{0, 0, 0}, {1, 0, 0}, 1}, c, 0.0) == ErrorCode::kInvalidArgument);
  CHECK(rayCode(Ray{{0, 0, 0}, {1, 0, 0}, 1}, c, -1.0) == ErrorCode::kInvalidArgument);
  CHECK(rayCode(Ray{{1e6, 0, 0}, {1, 0, 0}, 1}, c, 1.0) == ErrorCode::kOutOfRange);
  CHECK(rayCode(Ray{{0, 0, 0}, {1, 0, 0}, 1e6}, c, 1.0) == ErrorCode::kOutOfRange);  // its end is far
  CHECK(rayCode(Ray{{0, 0, 0}, {1, 0, 0}, 1}, far_chunk, 1.0) == ErrorCode::kOutOfRange);
  // Chunks within 2^16 voxels give or take one chunk: |c| <= 8193 on each axis.
  for (const std::int32_t v : {8193, -8193}) {
    CHECK(chunkInPhysicsRange({v, 0, 0}));
    CHECK(chunkInPhysicsRange({0, v, 0}));
    CHECK(chunkInPhysicsRange({0, 0, v}));
  }
  for (const std::int32_t v : {8194, -8194, std::numeric_limits<std::int32_t>::min()}) {
    CHECK_FALSE(chunkInPhysicsRange({v, 0, 0}));
    CHECK_FALSE(chunkInPhysicsRange({0, v, 0}));
    CHECK_FALSE(chunkInPhysicsRange({0, 0, v}));
  }
  auto boxCode = [](const P3& lo, const P3& hi, ChunkCoord chunk, double voxel_size) {
    const auto g = gridBoxOf(lo, hi, chunk, voxel_size);
    return g.ok() ? std::optional<ErrorCode>{} : std::optional<ErrorCode>{g.error().code};
  };
  CHECK(boxCode({1, 0, 0}, {0, 1, 1}, c, 1.0) == ErrorCode::kInvalidArgument);
  CHECK(boxCode({kNaN, 0, 0}, {1, 1, 1}, c, 1.0) == ErrorCode::kInvalidArgument);
  CHECK(boxCode({0, 0, 0}, {1, kInf, 1}, c, 1.0) == ErrorCode::kInvalidArgument);
  CHECK(boxCode({0, 0, 0}, {1, 1, 1}, c, 0.0) == ErrorCode::kInvalidArgument);
  CHECK(boxCode({0, 0, 0}, {1e6, 1, 1}, c, 1.0) == ErrorCode::kOutOfRange);
  CHECK(boxCode({0, 0, 0}, {1, 1, 1}, far_chunk, 1.0) == ErrorCode::kOutOfRange);
  CHECK(boxCode({0, 0, 0}, {1, 1, 1}, c, 1.0) == std::nullopt);
  // A mesh whose counts lie is refused.
  vtp::mesher::ChunkMesh mesh;
  mesh.triangle_count = mesh.owned_triangle_count = 1;
  mesh.vertex_count = 2;
  mesh.indices[0] = 0, mesh.indices[1] = 1, mesh.indices[2] = 5;
  ColliderBuilder builder;
  CHECK_FALSE(builder.build(mesh, c).ok());
  mesh.vertex_count = int(mesh.vertices.size()) + 1;
  CHECK_FALSE(builder.build(mesh, c).ok());
}

TEST_CASE("collider: a ray prepared once and shifted to a chunk equals prepareRay for that chunk, bit for bit") {
  // World rays prepare once (prepareWorldFrameRay) and shift per chunk (rayInChunk); every field must match, or the
  // two sides of a seam could see different numbers. Random rays near and far (up to 2^16 voxels), negative chunks,
  // the physics range's last chunks, and a chunk beyond it.
  std::mt19937_64 rng(0x77f1);
  auto uniform = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
  int compared = 0;
  for (int i = 0; i < 4000; ++i) {
    const double voxel_size = i % 3 == 0 ? 0.37 : 1.0;
    const double reach = (i % 4 == 0 ? 65000.0 : 200.0) * voxel_size;
    Ray ray{{uniform(-reach, reach), uniform(-reach, reach), uniform(-reach, reach)},
            {uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)}, uniform(0, 40) * voxel_size};
    if (i % 7 == 0) ray.direction[std::size_t(i % 3)] = 0;
    WorldFrameRay frame;
    const auto single = prepareRay(ray, {0, 0, 0}, voxel_size);
    REQUIRE(prepareWorldFrameRay(ray, voxel_size, frame).ok() == single.ok());
    if (!single.ok()) {
      CHECK(prepareWorldFrameRay(ray, voxel_size, frame).error().code == single.error().code);
      continue;
    }
    for (int k = 0; k < 4; ++k) {
      const std::array<double, 3> o = ray.origin.array();
      const auto near = [&](int a) { return std::int32_t(std::floor(o[a] / (8 * voxel_size))) + int(rng() % 5) - 2; };
      ChunkCoord chunk = k < 3 ? ChunkCoord{near(0), near(1), near(2)}
                               : ChunkCoord{rng() % 2 ? 8193 : -8193, near(1), rng() % 2 ? -8193 : 8193};
      if (!chunkInPhysicsRange(chunk)) chunk = {0, 0, 0};
      const auto want = prepareRay(ray, chunk, voxel_size);
      ChunkRay got;
      REQUIRE(want.ok());
      REQUIRE(rayInChunk(frame, chunk, got).ok());
      const ChunkRay& w = *want;
      const bool same = got.origin_int == w.origin_int && got.origin_frac == w.origin_frac &&
                        got.direction == w.direction && got.inv_direction == w.inv_direction &&
                        got.segment_min == w.segment_min && got.segment_max == w.segment_max && got.kz == w.kz &&
                        got.zero_axes == w.zero_axes && got.shear_x == w.shear_x && got.shear_y == w.shear_y &&
                        got.shear_z == w.shear_z && got.max_t == w.max_t && got.t_per_s == w.t_per_s &&
                        got.world.origin == w.world.origin && got.world.direction == w.world.direction &&
                        got.world.max_t == w.world.max_t && got.voxel_size == w.voxel_size;
      CHECK_MESSAGE(same, "ray " << i << " chunk " << chunk.x << "," << chunk.y << "," << chunk.z);
      ++compared;
    }
  }
  CHECK(compared > 10000);
  WorldFrameRay frame;
  REQUIRE(prepareWorldFrameRay(Ray{{0, 0, 0}, {1, 0, 0}, 1}, 1.0, frame).ok());
  ChunkRay out;
  const auto beyond = rayInChunk(frame, {8194, 0, 0}, out);
  REQUIRE_FALSE(beyond.ok());
  CHECK(beyond.error().code == vtp::ErrorCode::kOutOfRange);
}

TEST_CASE("collider: an empty mesh gives an empty collider that nothing hits") {
  vtp::mesher::ChunkMesh mesh;
  ColliderBuilder builder;
  auto c = builder.build(mesh, {0, 0, 0});
  REQUIRE(c.ok());
  CHECK((*c)->triangleCount() == 0);
  auto ray = prepareRay(Ray{{0, 0, 0}, {1, 1, 1}, 100}, {0, 0, 0}, 1.0);
  REQUIRE(ray.ok());
  RayHit h;
  CHECK_FALSE((*c)->closestHit(*ray, h));
  CHECK_FALSE((*c)->anyHit(*ray));
  std::array<std::uint16_t, 4> ids{};
  CHECK((*c)->gather(GridBox{{-100000, -100000, -100000}, {100000, 100000, 100000}}, ids) == 0);
}

TEST_CASE("collider: a ray through a seam edge on a chunk's boundary plane hits a side (origins a hair off the plane)") {
  // A floor y = 0 split at the seam x = 0 between chunk (0,0,0) (triangle A) and chunk (-1,0,0) (triangle B), built
  // from hand-made meshes so the shared edge lies exactly on the seam plane. Rays start 1e-9..1e-5 grid units beside
  // the plane and come down onto the edge: each chunk sees its own frame, and the edge must not leak.
  auto one = [](std::array<vtp::mesher::Vertex, 3> v) {
    vtp::mesher::ChunkMesh mesh;
    for (int i = 0; i < 3; ++i) {
      mesh.vertices[std::size_t(i)] = v[std::size_t(i)];
      mesh.indices[std::size_t(i)] = std::uint16_t(i);
    }
    mesh.materials[0] = 2;
    mesh.vertex_count = 3;
    mesh.triangle_count = mesh.owned_triangle_count = 1;
    return mesh;
  };
  ColliderBuilder builder;
  auto a = builder.build(one({{{0, 0, 0, 0}, {0, 0, 512, 0}, {256, 0, 0, 0}}}), {0, 0, 0});
  constexpr std::int16_t kEdge = 8 * kGridScale;  // x = 0 seen from chunk (-1, 0, 0)
  auto b = builder.build(one({{{kEdge, 0, 0, 0}, {kEdge - 256, 0, 0, 0}, {kEdge, 0, 512, 0}}}), {-1, 0, 0});
  REQUIRE((a.ok() && b.ok()));
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> exponent(-9, -5), z(10, 500), side(-1, 1);
  int misses = 0;
  for (int i = 0; i < 20000; ++i) {
    const double x0 = (side(rng) < 0 ? -1 : 1) * std::pow(10.0, exponent(rng));  // grid units off the plane
    const double zz = z(rng);
    // Grid units / kGridScale = voxels = world units (voxel size 1); the ray comes down 100 grid units onto x = 0.
    constexpr double g = kGridScale;
    const Ray ray{{x0 / g, 100.0 / g, zz / g}, {-x0 / g / 100, -1.0 / g, 0.0}, 150};
    bool hit = false;
    for (const Collider* c : {a->get(), b->get()}) {
      auto pr = prepareRay(ray, c->chunk(), 1.0);
      REQUIRE(pr.ok());
      RayHit h;
      hit = hit || c->closestHit(*pr, h);
    }
    if (!hit) ++misses;
  }
  CHECK(misses == 0);
}

TEST_CASE("collider builder: an index past vertex_count is refused, in a neighbour's triangle too") {
  auto world = vtp::test::makeWorld();
  REQUIRE(world->fillBox(VoxelBox{{-8, -8, -8}, {8, 3, 8}}, 2).ok());
  std::vector<Voxel> box(std::size_t(vtp::mesher::boxVolume(vtp::mesher::kWideApron)));
  REQUIRE(world->readBox({{-2, -2, -2}, {10, 10, 10}}, box).ok());
  vtp::mesher::SurfaceMesher mesher;
  vtp::mesher::ChunkMesh mesh;
  REQUIRE(mesher.mesh(box, vtp::mesher::kWideApron, mesh).ok());
  REQUIRE(mesh.owned_triangle_count > 0);
  REQUIRE(mesh.triangle_count > mesh.owned_triangle_count);
  ColliderBuilder builder;
  REQUIRE(builder.build(mesh, {0, 0, 0}).ok());
  for (const int triangle : {0, mesh.triangle_count - 1}) {
    vtp::mesher::ChunkMesh bad = mesh;
    bad.indices[3 * std::size_t(triangle) + 1] = std::uint16_t(bad.vertex_count);
    auto built = builder.build(bad, {0, 0, 0});
    REQUIRE_FALSE(built.ok());
    CHECK(built.error().code == vtp::ErrorCode::kInvalidArgument);
  }
  CHECK(builder.build(mesh, {0, 0, 0}).ok());  // the builder is still usable
}

TEST_CASE("collider builder: counts beyond the mesh's kind and vertices outside the mesher's range are refused") {
  using vtp::mesher::kMaxPosition;
  using vtp::mesher::kMinPosition;
  ColliderBuilder builder;
  vtp::mesher::ChunkMesh huge;
  huge.vertex_count = 1;  // every index (0) valid, no owned triangle: only the count is wrong
  for (const int count : {-1, vtp::mesher::kMaxWideTriangles + 1, std::numeric_limits<int>::max()}) {
    huge.triangle_count = count;
    auto built = builder.build(huge, {0, 0, 0});
    REQUIRE_FALSE(built.ok());
    CHECK(built.error().code == vtp::ErrorCode::kInvalidArgument);
    CHECK(built.error().message.find("triangle_count") != std::string::npos);
  }
  // One triangle spanning the range on two axes; each axis in turn pushed one unit past either end.
  auto triangle = [](int axis, std::int16_t lo, std::int16_t hi) {
    vtp::mesher::ChunkMesh m;
    const int u = (axis + 1) % 3;
    std::array<std::int16_t, 3> a{}, b{}, c{};
    a[std::size_t(axis)] = lo, b[std::size_t(axis)] = hi, c[std::size_t(axis)] = lo;
    c[std::size_t(u)] = hi;
    m.vertices[0] = {a[0], a[1], a[2], 0}, m.vertices[1] = {b[0], b[1], b[2], 0}, m.vertices[2] = {c[0], c[1], c[2], 0};
    m.indices[0] = 0, m.indices[1] = 1, m.indices[2] = 2;
    m.materials[0] = 2;
    m.vertex_count = 3, m.triangle_count = m.owned_triangle_count = 1;
    return m;
  };
  for (int axis = 0; axis < 3; ++axis) {
    for (const ColliderUse use : {ColliderUse::kQueries, ColliderUse::kContacts}) {
      CHECK(builder.build(triangle(axis, kMinPosition, kMaxPosition), {0, 0, 0}, use).ok());
      CHECK_FALSE(builder.build(triangle(axis, kMinPosition - 1, kMaxPosition), {0, 0, 0}, use).ok());
      CHECK_FALSE(builder.build(triangle(axis, kMinPosition, kMaxPosition + 1), {0, 0, 0}, use).ok());
      CHECK_FALSE(builder.build(triangle(axis, -32768, 32767), {0, 0, 0}, use).ok());
    }
  }
  // A ray onto the largest accepted triangle: its normal's integer products stay in range (UBSan checks).
  auto built = builder.build(triangle(1, kMinPosition, kMaxPosition), {0, 0, 0}, ColliderUse::kQueries);
  REQUIRE(built.ok());
  const auto ray = prepareRay(Ray{{-1, 2, 3}, {1, 0, 0}, 10}, {0, 0, 0}, 1.0);  // the triangle lies in x = 0
  REQUIRE(ray.ok());
  RayHit hit;
  REQUIRE((*built)->closestHit(*ray, hit));
  CHECK(hit.t == doctest::Approx(1.0));
  CHECK(std::abs(hit.normal[0]) == doctest::Approx(1.0));
}

TEST_CASE("collider builder: a collider for queries is the contacts' collider without the edge flags") {
  auto world = randomWorld(31, 1.0, 40);
  ColliderBuilder builder;
  vtp::mesher::SurfaceMesher surface_mesher;
  vtp::mesher::ChunkMesh mesh;
  std::vector<Voxel> box(std::size_t(vtp::mesher::boxVolume(vtp::mesher::kApron)));
  std::mt19937_64 rng(32);
  int chunks = 0, flagged = 0;
  for (const ChunkCoord c : vtp::test::chunksNearStored(*world)) {
    REQUIRE(world->readBox(grown(chunkBox(c), vtp::mesher::kApron), box).ok());
    REQUIRE(surface_mesher.mesh(box, vtp::mesher::kApron, mesh).ok());
    auto full = builder.build(mesh, c);
    auto lean = builder.build(mesh, c, ColliderUse::kQueries);
    REQUIRE(full.ok());
    REQUIRE(lean.ok());
    const Collider& f = **full;
    const Collider& q = **lean;
    CHECK(f.hasEdgeFlags());
    CHECK_FALSE(q.hasEdgeFlags());
    CHECK(f.serves(ColliderUse::kContacts));
    CHECK_FALSE(q.serves(ColliderUse::kContacts));
    CHECK(q.serves(ColliderUse::kQueries));
    REQUIRE(q.triangleCount() == f.triangleCount());
    CHECK(q.leafCount() == f.leafCount());
    CHECK(q.bytes() == f.bytes());
    if (f.triangleCount() == 0) continue;
    ++chunks;
    for (int id = 0; id < f.triangleCount(); ++id) {
      const ColliderTriangle a = f.triangle(id), b = q.triangle(id);
      for (int k = 0; k < 3; ++k) {
        CHECK(a.vertices[std::size_t(k)].x == b.vertices[std::size_t(k)].x);
        CHECK(a.vertices[std::size_t(k)].y == b.vertices[std::size_t(k)].y);
        CHECK(a.vertices[std::size_t(k)].z == b.vertices[std::size_t(k)].z);
      }
      CHECK(a.material == b.material);
      CHECK(b.edge_flags == 0);
      flagged += a.edge_flags != 0;
    }
    for (int leaf = 0; leaf < f.leafCount(); ++leaf) CHECK(f.leafTriangles(leaf) == q.leafTriangles(leaf));
    // The same answers to rays.
    P3 lo, hi;
    worldBounds(f, 1.0, lo, hi);
    for (int i = 0; i < 16; ++i) {
      const P3 a = uniformIn(rng, lo, hi), b = uniformIn(rng, lo, hi);
      const Ray ray{WorldVec3(a), WorldVec3(sub(b, a)), 1.0};
      auto prepared = prepareRay(ray, c, 1.0);
      REQUIRE(prepared.ok());
      RayHit hf, hq;
      const bool found = f.closestHit(*prepared, hf);
      CHECK(q.closestHit(*prepared, hq) == found);
      if (found) {
        CHECK(hq.t == hf.t);
        CHECK(hq.triangle == hf.triangle);
      }
    }
  }
  CHECK(chunks > 20);
  CHECK(flagged > 0);  // the comparison saw edge flags to leave out
}
