// Contact queries under concurrency (TSan in CI, label `tsan`): four threads ask TerrainPhysics::contacts for random
// shapes while one thread edits the world and a small collider budget forces evictions. Every answer is well formed
// (1..4 finite points per manifold, unit normals, the material's friction), and after the editor stops the answers
// equal a single-threaded query's.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "support/random_world.h"
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
  auto world = vtp::test::makeWorld();
  REQUIRE(world->fillBox({{-16, -8, -16}, {16, 0, 16}}, 2).ok());
  const VoxelBox region{{-14, -6, -14}, {14, 4, 14}};
  std::mt19937_64 setup(81);
  vtp::test::randomEdits(*world, region, 20, setup);
  TerrainPhysicsOptions options;
  options.colliders.byte_budget = std::size_t(64) << 10;
  auto created = TerrainPhysics::create(*world, options);
  REQUIRE(created.ok());
  TerrainPhysics& physics = **created;

  std::atomic<bool> done{false}, failed{false};
  std::atomic<long> queries{0}, touching{0};
  std::thread editor([&] {
    std::mt19937_64 rng(82);
    // An edit every 20 ms for 2 s (fewer if the machine is slow: at most 10 s).
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 100 && std::chrono::steady_clock::now() < start + std::chrono::seconds(10); ++i) {
      vtp::test::randomEdits(*world, region, 1, rng);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    done = true;
  });
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937_64 rng(200 + std::uint64_t(t));
      std::uniform_real_distribution<double> xz(-12, 12), y(-5, 3);
      std::vector<ChunkManifold> out;
      while (!done) {
        Pose pose;
        pose.position = {xz(rng), y(rng), xz(rng)};
        if (!physics.contacts(shapeFor(rng()), pose, out).ok() || !wellFormed(*world, out)) failed = true;
        ++queries;
        if (!out.empty()) ++touching;
      }
    });
  }
  editor.join();
  for (auto& r : readers) r.join();
  CHECK_FALSE(failed.load());
  CHECK(queries.load() > 100);
  CHECK(touching.load() > 10);
  // Quiet now: a second instance built from the same world answers the same.
  auto fresh = TerrainPhysics::create(*world);
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
