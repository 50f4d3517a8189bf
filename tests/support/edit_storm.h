#pragma once
// Scaffolding the TerrainPhysics concurrency tests share: a scene (ground with random edits, and a physics whose small
// collider budget forces evictions) and readers run while an editor thread keeps changing it.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "support/random_world.h"
#include "support/standard_worlds.h"
#include "vtp/physics/terrain_physics.h"

namespace vtp::test {

/// Where the scene's edits land: in and above the ground of StormScene. [Unit: voxels]
inline constexpr terrain::VoxelBox kStormRegion{{-14, -6, -14}, {14, 4, 14}};

/// Ground [-16, 16) x [-8, 0) x [-16, 16) of material 2 with 20 random edits in kStormRegion (from `seed`), and its
/// TerrainPhysics with a 64 KiB collider budget.
struct StormScene {
  std::unique_ptr<terrain::World> world;
  std::unique_ptr<physics::TerrainPhysics> physics;
};

inline StormScene makeStormScene(std::uint64_t seed) {
  StormScene scene;
  scene.world = flatRockWorld(16);
  std::mt19937_64 rng(seed);
  randomEdits(*scene.world, kStormRegion, 20, rng);
  physics::TerrainPhysicsOptions options;
  options.colliders.byte_budget = std::size_t(64) << 10;
  auto created = physics::TerrainPhysics::create(*scene.world, options);
  REQUIRE(created.ok());
  scene.physics = std::move(created.value());
  return scene;
}

/// Runs `reader(index, done)` on `readers` threads while an editor makes a random edit in kStormRegion (from
/// `seed`) every 20 ms for 2 s (fewer if the machine is slow: at most 10 s) and then sets `done`; returns when all
/// have finished. A reader loops until `done`.
template <class Reader>
void runWithEditor(terrain::World& world, std::uint64_t seed, int readers, Reader&& reader) {
  std::atomic<bool> done{false};
  std::thread editor([&] {
    std::mt19937_64 rng(seed);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 100 && std::chrono::steady_clock::now() < start + std::chrono::seconds(10); ++i) {
      randomEdits(world, kStormRegion, 1, rng);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    done = true;
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < readers; ++t) threads.emplace_back([&, t] { reader(t, done); });
  editor.join();
  for (auto& thread : threads) thread.join();
}

}  // namespace vtp::test
