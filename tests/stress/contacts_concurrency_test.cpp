// Contact queries under concurrency (TSan in CI, label `tsan`): four threads ask TerrainPhysics::contacts for random
// shapes while one thread edits the world and a small collider budget forces evictions. Every answer is well formed
// (1..4 finite points per manifold, unit normals, the material's friction), and after the editor stops the answers
// equal a single-threaded query's.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <vector>

#include "support/edit_storm.h"
#include "vtp/physics/terrain_physics.h"

using namespace vtp::terrain;
using namespace vtp::physics;

namespace {

ConvexShape shapeFor(std::uint64_t r) {
  switch (r % 3) {
    case 0: return ConvexShape::sphere(0.3 + double(r % 7) * 0.1);
    case 1: return ConvexShape::box({0.4, 0.3 + double(r % 5) * 0.1, 0.5});
    default: return ConvexShape::capsule(0.3, 0.5);
  }
}

bool wellFormed(const World& world, const std::vector<ChunkManifold>& out) {
  for (const ChunkManifold& m : out) {
    if (m.count < 1 || m.count > 4) return false;
    for (int i = 0; i < m.count; ++i) {
      const ContactPoint& p = m.points[std::size_t(i)];
      const double len = std::sqrt(double(p.normal[0]) * p.normal[0] + double(p.normal[1]) * p.normal[1] +
                                   double(p.normal[2]) * p.normal[2]);
      if (!std::isfinite(p.depth) || std::abs(len - 1) > 1e-3) return false;
      if (p.friction != world.materials()[p.material].friction) return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("Contacts concurrency: 4 query threads, 1 editor, a 64 KiB collider budget") {
  vtp::test::StormScene scene = vtp::test::makeStormScene(81);
  const World& world = *scene.world;
  TerrainPhysics& physics = *scene.physics;
  std::atomic<bool> failed{false};
  std::atomic<long> queries{0}, touching{0};
  vtp::test::runWithEditor(*scene.world, 82, 4, [&](int t, const std::atomic<bool>& done) {
    std::mt19937_64 rng(200 + std::uint64_t(t));
    std::uniform_real_distribution<double> xz(-12, 12), y(-5, 3);
    std::vector<ChunkManifold> out;
    while (!done) {
      Pose pose;
      pose.position = {xz(rng), y(rng), xz(rng)};
      if (!physics.contacts(shapeFor(rng()), pose, out).ok() || !wellFormed(world, out)) failed = true;
      ++queries;
      if (!out.empty()) ++touching;
    }
  });
  CHECK_FALSE(failed.load());
  CHECK(queries.load() > 100);
  CHECK(touching.load() > 10);
  // Quiet now: a second instance built from the same world answers the same.
  auto fresh = TerrainPhysics::create(*scene.world);
  REQUIRE(fresh.ok());
  std::mt19937_64 rng(300);
  std::uniform_real_distribution<double> xz(-12, 12), y(-5, 3);
  for (int i = 0; i < 200; ++i) {
    Pose pose;
    pose.position = {xz(rng), y(rng), xz(rng)};
    const ConvexShape shape = shapeFor(rng());
    std::vector<ChunkManifold> a, b;
    REQUIRE(physics.contacts(shape, pose, a).ok());
    REQUIRE((**fresh).contacts(shape, pose, b).ok());
    REQUIRE(a.size() == b.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
      CHECK(a[k].chunk == b[k].chunk);
      CHECK(a[k].count == b[k].count);
      for (int p = 0; p < a[k].count; ++p) CHECK(a[k].points[std::size_t(p)].depth == b[k].points[std::size_t(p)].depth);
    }
  }
}
