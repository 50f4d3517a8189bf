// Change listeners that cannot allocate (allocation probes, support/alloc_probe.h): an edit whose mask-index update,
// collider-cache invalidation or pair-tracker re-evaluation runs out of memory no longer ends the process. The index
// is marked stale and its next query rebuilds it; the cache drops every collider rather than keep a stale one; the
// tracker re-evaluates every body on its next call and reports them all woken. Each allocation of the edit is made to
// fail in turn, and after each the three answer exactly as structures built fresh from the world.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "support/alloc_probe.h"
#include "support/collider_fingerprint.h"
#include "support/random_world.h"
#include "support/standard_worlds.h"
#include "support/terrain_physics_support.h"
#include "vtp/physics/pair_tracker.h"
#include "vtp/physics/terrain_physics.h"

using namespace vtp::terrain;
using namespace vtp::physics;
namespace probe = vtp::test::alloc_probe;

namespace {

// Bodies over the crater's chunks and beside it, across seams and negative coordinates. [Unit: world units]
std::vector<Aabb> bodyBoxes() {
  std::vector<Aabb> boxes;
  for (int i = 0; i < 12; ++i) {
    const double x = -10 + 1.7 * i, z = 6 - 1.3 * i;
    boxes.push_back({{x, -0.8, z}, {x + 1.2, 0.6, z + 0.9}});
  }
  return boxes;
}

}  // namespace

TEST_CASE("listener memory: an edit whose listeners cannot allocate leaves the index, cache and tracker answering right") {
  std::uint64_t index_recoveries = 0, cache_drops = 0, edits_done = 0, failed_edits = 0;
  for (std::int64_t n = 1;; ++n) {
    auto world = vtp::test::flatRockWorld(16);
    std::mt19937_64 rng(17);
    vtp::test::randomEdits(*world, {{-14, -6, -14}, {14, 2, 14}}, 8, rng);
    auto physics = vtp::test::makePhysics(*world);
    PairTracker tracker(physics->masks());
    const std::vector<Aabb> boxes = bodyBoxes();
    PairChanges changes;
    for (std::size_t b = 0; b < boxes.size(); ++b) REQUIRE(tracker.update(b, boxes[b], changes).ok());
    std::vector<ChunkCoord> cached;
    for (int z = -2; z <= 1; ++z)
      for (int y = -1; y <= 0; ++y)
        for (int x = -2; x <= 1; ++x) {
          REQUIRE(physics->colliders().acquire({x, y, z}).ok());
          cached.push_back({x, y, z});
        }

    // A crater across four chunk columns, its n-th allocation failing.
    probe::g_fail_countdown = n;
    const auto result = world->apply(ShapeEdit{SphereShape{{0.3, -1.0, -0.4}, 4.5}, EditOp::kClear, 0});
    const bool reached = probe::g_fail_countdown.load() == 0;
    probe::g_fail_countdown = 0;
    if (!reached) {
      REQUIRE(result.ok());
      break;  // every allocation of the edit has been made to fail once
    }
    if (!result.ok()) {
      CHECK(result.error().code == vtp::ErrorCode::kOutOfMemory);  // the world's own: nothing changed
      ++failed_edits;
    } else {
      ++edits_done;
    }

    // The tracker (re-evaluating through the index, which rebuilds first when stale) wakes every body within a voxel
    // of the crater, and then holds the pairs a fresh one does.
    REQUIRE(tracker.takeEditChanges(changes).ok());
    if (result.ok() && !result->changed.empty()) {
      const VoxelBox& v = result->changed;
      for (std::size_t b = 0; b < boxes.size(); ++b) {
        const Aabb& box = boxes[b];
        const bool near = box.min.x - 1 <= v.max.x && box.max.x + 1 >= v.min.x && box.min.y - 1 <= v.max.y &&
                          box.max.y + 1 >= v.min.y && box.min.z - 1 <= v.max.z && box.max.z + 1 >= v.min.z;
        if (near)
          CHECK_MESSAGE(std::binary_search(changes.woken.begin(), changes.woken.end(), std::uint64_t(b)),
                        "allocation " << n << ", body " << b << " not woken");
      }
    }
    auto fresh_index = MaskIndex::create(*world);
    REQUIRE(fresh_index.ok());
    PairTracker fresh(*fresh_index.value());
    for (std::size_t b = 0; b < boxes.size(); ++b) {
      REQUIRE(tracker.update(b, boxes[b], changes).ok());
      PairChanges unused;
      REQUIRE(fresh.update(b, boxes[b], unused).ok());
      CHECK_MESSAGE(tracker.pairs(b) == fresh.pairs(b), "allocation " << n << ", body " << b);
    }
    index_recoveries += physics->masks().stats().recoveries;
    CHECK(physics->masks().validate().ok());
    // No collider survives that the edit changed.
    cache_drops += physics->colliders().stats().out_of_memory_drops;
    for (const ChunkCoord c : cached) {
      auto pin = physics->colliders().acquire(c);
      REQUIRE(pin.ok());
      CHECK_MESSAGE(vtp::test::fingerprint(**pin) == vtp::test::freshFingerprint(*world, c), "allocation " << n);
    }
    CHECK(physics->colliders().validate().ok());
  }
  // The sweep reached each listener's allocations, and the edit itself both failed and went through.
  CHECK(failed_edits > 0);
  CHECK(edits_done > 0);
  CHECK(index_recoveries > 0);
  CHECK(cache_drops > 0);
}
