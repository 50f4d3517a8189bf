// The pair tracker against brute force: the pairs of a body are exactly what a freshly built mask index reports for
// its box, and the added/removed lists are exactly the difference, over random motion and random edits (edits
// re-evaluate bodies inside the edit call); batched updates report what the same updates one by one do.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "support/random_world.h"
#include "support/standard_worlds.h"
#include "vtp/physics/pair_tracker.h"

using namespace vtp::terrain;
using vtp::physics::Aabb;
using vtp::physics::ChunkTouch;
using vtp::physics::MaskIndex;
using vtp::physics::Pair;
using vtp::physics::PairChanges;
using vtp::physics::PairKind;
using vtp::physics::PairTracker;

namespace {

using PairKey = std::tuple<std::uint64_t, ChunkCoord, int>;

PairKey keyOf(const Pair& p) { return {p.body, p.chunk, int(p.kind)}; }

// The pairs a body with `box` should have: what a mask index built from scratch on the current world reports.
std::set<PairKey> expectedPairs(World& world, std::uint64_t body, const Aabb& box) {
  auto fresh = MaskIndex::create(world);
  REQUIRE(fresh.ok());
  std::vector<ChunkTouch> touches;
  REQUIRE((*fresh)->query(box, touches).ok());
  std::set<PairKey> pairs;
  for (const ChunkTouch& t : touches) {
    if (t.solid) pairs.insert({body, t.chunk, int(PairKind::kSolid)});
    if (t.water) pairs.insert({body, t.chunk, int(PairKind::kWater)});
  }
  return pairs;
}

std::set<PairKey> keys(const std::vector<Pair>& list) {
  std::set<PairKey> out;
  for (const Pair& p : list) CHECK(out.insert(keyOf(p)).second);  // no duplicates
  return out;
}

// Applies reported changes to `held`, checking they are consistent with it (add only new, remove only held).
void applyChanges(std::set<PairKey>& held, const PairChanges& changes) {
  for (const Pair& p : changes.removed) CHECK(held.erase(keyOf(p)) == 1);
  for (const Pair& p : changes.added) CHECK(held.insert(keyOf(p)).second);
}

// The same for changes of many bodies (edits).
void applyChanges(std::map<std::uint64_t, std::set<PairKey>>& held, const PairChanges& changes) {
  for (const Pair& p : changes.removed) CHECK(held[p.body].erase(keyOf(p)) == 1);
  for (const Pair& p : changes.added) CHECK(held[p.body].insert(keyOf(p)).second);
}

Aabb randomBox(std::mt19937_64& rng, double voxel_size) {
  std::uniform_real_distribution<double> centre(-30.0, 30.0), size(0.3, 4.0);
  const double cx = centre(rng), cy = centre(rng) / 2.0, cz = centre(rng), s = size(rng);
  return {{(cx - s / 2) * voxel_size, (cy - s / 2) * voxel_size, (cz - s / 2) * voxel_size},
          {(cx + s / 2) * voxel_size, (cy + s / 2) * voxel_size, (cz + s / 2) * voxel_size}};
}

// Random terrain with a pool of water at the origin, for bodies to move through; `rng` continues from its edits.
std::unique_ptr<World> terrainWithWater(std::mt19937_64& rng) {
  auto world = vtp::test::makeWorld();
  vtp::test::randomEdits(*world, {{-32, -16, -32}, {32, 16, 32}}, 60, rng);
  REQUIRE(world->fillBox({{-10, -3, -10}, {10, 0, 10}}, kWaterMaterial).ok());
  return world;
}

}  // namespace

TEST_CASE("PairTracker: pairs and reported changes equal brute force under random motion and edits") {
  SUBCASE("a body's reported changes are exactly the difference between its old and new pairs under random motion") {
    std::mt19937_64 rng(404);
    auto world = terrainWithWater(rng);
    auto index = MaskIndex::create(*world);
    REQUIRE(index.ok());
    PairTracker tracker(**index);
    std::map<std::uint64_t, std::set<PairKey>> held;
    PairChanges changes;
    std::size_t nonempty = 0;
    for (int step = 0; step < 300; ++step) {
      const std::uint64_t body = rng() % 6;
      const Aabb box = randomBox(rng, 1.0);
      REQUIRE(tracker.update(body, box, changes).ok());
      applyChanges(held[body], changes);
      const std::set<PairKey> expected = expectedPairs(*world, body, box);
      CHECK(held[body] == expected);
      CHECK(keys(tracker.pairs(body)) == expected);
      nonempty += expected.empty() ? 0 : 1;
    }
    CHECK(nonempty > 50);  // the motion really meets terrain and water
    CHECK(tracker.bodyCount() <= 6);
  }

  SUBCASE("a batched update reports each body's net change, as the same updates one by one leave it") {
    std::mt19937_64 rng(405);
    auto world = terrainWithWater(rng);
    auto index = MaskIndex::create(*world);
    REQUIRE(index.ok());
    PairTracker one_by_one(**index), batched(**index);
    PairChanges changes, each, expected;
    std::vector<vtp::physics::BodyBox> moves;
    std::size_t reported = 0;
    for (int step = 0; step < 60; ++step) {
      // Up to 150 moves (some large boxes, some ids twice, new ids appearing), a batch of none included.
      moves.resize(rng() % 151);
      for (auto& m : moves) {
        m.body = rng() % 40;
        m.box = randomBox(rng, 1.0);
        if (rng() % 10 == 0) m.box.max.x += 30;
      }
      // The net change of each moved body, from its pairs before the moves to after them all.
      std::map<std::uint64_t, std::set<PairKey>> before, after;
      for (const auto& m : moves) before[m.body] = keys(one_by_one.pairs(m.body));
      for (const auto& m : moves) REQUIRE(one_by_one.update(m.body, m.box, each).ok());
      std::set<PairKey> net_added, net_removed;
      for (auto& [body, held] : before) {
        after[body] = keys(one_by_one.pairs(body));
        std::set_difference(after[body].begin(), after[body].end(), held.begin(), held.end(),
                            std::inserter(net_added, net_added.end()));
        std::set_difference(held.begin(), held.end(), after[body].begin(), after[body].end(),
                            std::inserter(net_removed, net_removed.end()));
      }
      REQUIRE(batched.update(moves, changes).ok());
      CHECK(keys(changes.added) == net_added);  // keys() also checks that no pair is listed twice
      CHECK(keys(changes.removed) == net_removed);
      CHECK(changes.woken.empty());
      // Each body's changes are one run, its pairs sorted by chunk as update()'s are.
      for (const std::vector<Pair>* list : {&changes.added, &changes.removed}) {
        std::set<std::uint64_t> finished;
        for (std::size_t i = 0; i < list->size(); ++i) {
          const Pair& p = (*list)[i];
          CHECK(finished.count(p.body) == 0);
          if (i + 1 < list->size() && (*list)[i + 1].body == p.body) {
            CHECK(std::tuple(p.chunk, int(p.kind)) < std::tuple((*list)[i + 1].chunk, int((*list)[i + 1].kind)));
          } else {
            finished.insert(p.body);
          }
        }
      }
      reported += changes.added.size() + changes.removed.size();
    }
    CHECK(reported > 500);
    CHECK(batched.bodyCount() == one_by_one.bodyCount());
    for (std::uint64_t body = 0; body < 40; ++body) CHECK(batched.pairs(body) == one_by_one.pairs(body));

    SUBCASE("a batch with one invalid box, even one a later entry of its id replaces, is an error naming its position, "
            "and changes nothing") {
      moves.assign(20, {7, {{1.0, -0.5, 1.0}, {2.0, 0.5, 2.0}}});
      moves[13] = {7, {{std::numeric_limits<double>::quiet_NaN(), 0, 0}, {1, 1, 1}}};
      const auto status = batched.update(moves, changes);
      REQUIRE_FALSE(status.ok());
      CHECK(status.error().message.find("box 13 of the batch") != std::string::npos);
      CHECK(changes.added.empty());
      CHECK(changes.removed.empty());
      CHECK(batched.pairs(7) == one_by_one.pairs(7));
      CHECK(batched.bodyCount() == one_by_one.bodyCount());
    }
  }

  SUBCASE("edits re-evaluate bodies before the edit returns, so pairs always equal a rebuild from scratch") {
    for (double voxel_size : {1.0, 0.25}) {
      WorldConfig config;
      config.voxel_size = voxel_size;
      auto world = vtp::test::makeWorld(config);
      std::mt19937_64 rng(405);
      vtp::test::randomEdits(*world, {{-24, -12, -24}, {24, 12, 24}}, 30, rng);
      auto index = MaskIndex::create(*world);
      REQUIRE(index.ok());
      PairTracker tracker(**index);
      std::map<std::uint64_t, std::set<PairKey>> held;
      std::map<std::uint64_t, Aabb> boxes;
      PairChanges changes;
      for (std::uint64_t body = 0; body < 12; ++body) {
        boxes[body] = randomBox(rng, voxel_size);
        REQUIRE(tracker.update(body, boxes[body], changes).ok());
        applyChanges(held[body], changes);
      }
      std::size_t woken_total = 0, edit_changes = 0;
      for (int edit = 0; edit < 25; ++edit) {
        // Edits near the bodies, on chunk corners and straddling seams; some fill, some clear.
        const Aabb& near = boxes[rng() % 12];
        const Vec3d c{std::floor(near.min.x / voxel_size) + double(rng() % 3), std::floor(near.min.y / voxel_size),
                      std::floor(near.min.z / voxel_size) + double(rng() % 3)};
        const double r = 1.0 + double(rng() % 5);
        const int kind = int(rng() % 3);
        auto done = kind == 0   ? world->fillSphere(c, r, 2)
                    : kind == 1 ? world->clearSphere(c, r)
                                : world->fillSphere(c, r, kWaterMaterial);
        REQUIRE(done.ok());
        REQUIRE(tracker.takeEditChanges(changes).ok());
        edit_changes += changes.added.size() + changes.removed.size();
        woken_total += changes.woken.size();
        CHECK(std::is_sorted(changes.woken.begin(), changes.woken.end()));
        applyChanges(held, changes);
        for (const auto& [body, box] : boxes) {
          const std::set<PairKey> expected = expectedPairs(*world, body, box);
          CHECK(held[body] == expected);
          CHECK(keys(tracker.pairs(body)) == expected);
        }
      }
      CHECK(edit_changes > 0);
      CHECK(woken_total > 0);
    }
  }

  SUBCASE("a body is woken exactly when an edit changes voxels within one voxel of its box") {
    auto world = vtp::test::flatRockWorld(16);
    auto index = MaskIndex::create(*world);
    REQUIRE(index.ok());
    PairTracker tracker(**index);
    PairChanges changes;
    REQUIRE(tracker.update(1, {{2.0, 0.0, 2.0}, {3.0, 1.0, 3.0}}, changes).ok());  // resting on the ground
    REQUIRE(tracker.update(2, {{2.0, 6.0, 2.0}, {3.0, 7.0, 3.0}}, changes).ok());  // hanging above it
    REQUIRE(world->setVoxel({4, 0, 2}, Voxel{2, 255}).ok());  // one voxel beside body 1's box: within reach
    REQUIRE(tracker.takeEditChanges(changes).ok());
    CHECK(changes.woken == std::vector<std::uint64_t>{1});
    REQUIRE(world->setVoxel({6, 0, 2}, Voxel{2, 255}).ok());  // three voxels away from both
    REQUIRE(tracker.takeEditChanges(changes).ok());
    CHECK(changes.woken.empty());
    REQUIRE(world->setVoxel({2, 4, 2}, Voxel{2, 255}).ok());  // one voxel below body 2's box
    REQUIRE(tracker.takeEditChanges(changes).ok());
    CHECK(changes.woken == std::vector<std::uint64_t>{2});
  }

  SUBCASE("a body entering water gets a water pair; removing a body reports all its pairs removed") {
    auto world = vtp::test::makeWorld();
    REQUIRE(world->fillBox({{-16, -8, -16}, {16, -4, 16}}, 2).ok());
    REQUIRE(world->fillBox({{-16, -4, -16}, {16, 0, 16}}, kWaterMaterial).ok());
    auto index = MaskIndex::create(*world);
    REQUIRE(index.ok());
    PairTracker tracker(**index);
    PairChanges changes;
    REQUIRE(tracker.update(9, {{0.5, 5.0, 0.5}, {1.5, 6.0, 1.5}}, changes).ok());
    CHECK(changes.added.empty());
    REQUIRE(tracker.update(9, {{0.5, -1.5, 0.5}, {1.5, -0.5, 1.5}}, changes).ok());
    CHECK(std::any_of(changes.added.begin(), changes.added.end(), [](const Pair& p) { return p.kind == PairKind::kWater; }));
    CHECK(std::none_of(changes.added.begin(), changes.added.end(), [](const Pair& p) { return p.kind == PairKind::kSolid; }));
    const std::size_t held = tracker.pairs(9).size();
    tracker.remove(9, changes);
    CHECK(changes.removed.size() == held);
    CHECK(tracker.pairs(9).empty());
    CHECK(tracker.bodyCount() == 0);
    tracker.remove(9, changes);  // unknown id: nothing
    CHECK(changes.removed.empty());
  }

  SUBCASE("a non-finite or inverted box is an error and changes nothing") {
    auto world = vtp::test::makeWorld();
    REQUIRE(world->fillBox({{0, -4, 0}, {8, 0, 8}}, 2).ok());
    auto index = MaskIndex::create(*world);
    REQUIRE(index.ok());
    PairTracker tracker(**index);
    PairChanges changes;
    REQUIRE(tracker.update(3, {{1.0, -0.5, 1.0}, {2.0, 0.5, 2.0}}, changes).ok());
    const std::vector<Pair> before = tracker.pairs(3);
    REQUIRE_FALSE(before.empty());
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    for (const Aabb& bad : {Aabb{{nan, 0, 0}, {1, 1, 1}}, Aabb{{0, 0, 0}, {1, inf, 1}}, Aabb{{2, 0, 0}, {1, 1, 1}}}) {
      const auto status = tracker.update(3, bad, changes);
      CHECK_FALSE(status.ok());
      CHECK(changes.added.empty());
      CHECK(changes.removed.empty());
      CHECK(tracker.pairs(3) == before);
    }
    CHECK_FALSE(tracker.update(4, {{nan, 0, 0}, {1, 1, 1}}, changes).ok());
    const auto far = tracker.update(3, {{70000.0, 0, 0}, {70001.0, 1, 1}}, changes);  // beyond 2^16 voxels
    REQUIRE_FALSE(far.ok());
    CHECK(far.error().code == vtp::ErrorCode::kOutOfRange);
    CHECK(tracker.pairs(3) == before);
    CHECK(tracker.bodyCount() == 1);
  }
}
