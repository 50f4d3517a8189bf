// The broadphase under concurrency (run under TSan in CI, label `tsan`): one thread edits the world (the mask index
// and pair tracker update inside each edit), two query the index (one box by box, one in batches), one moves bodies
// through the pair tracker (alone and in batches). Afterwards the index and the pairs must equal ones built from
// scratch.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <tuple>
#include <random>
#include <thread>
#include <vector>

#include "support/random_world.h"
#include "vtp/physics/pair_tracker.h"

using namespace vtp::terrain;
using vtp::physics::Aabb;
using vtp::physics::ChunkTouch;
using vtp::physics::MaskIndex;
using vtp::physics::PairChanges;
using vtp::physics::PairTracker;

TEST_CASE("broadphase: queries and pair updates run while edits rebuild the index and end equal to a fresh build") {
  SUBCASE("queries and pair updates run while edits rebuild the index; the end state equals a fresh build") {
    auto world = vtp::test::makeWorld();
    std::mt19937_64 setup(91);
    vtp::test::randomEdits(*world, {{-24, -12, -24}, {24, 12, 24}}, 40, setup);
    auto created = MaskIndex::create(*world);
    REQUIRE(created.ok());
    MaskIndex& index = **created;
    PairTracker tracker(index);

    std::atomic<bool> done{false}, failed{false};
    std::thread editor([&] {
      std::mt19937_64 rng(92);
      for (int i = 0; i < 60; ++i) vtp::test::randomEdits(*world, {{-24, -12, -24}, {24, 12, 24}}, 1, rng);
      done = true;
    });
    // Body-sized boxes take the query's small path; large ones (10-24 voxels, up to 4 chunks a side) its grid walk.
    auto box = [](std::mt19937_64& rng, bool large = false) {
      std::uniform_real_distribution<double> at(-26.0, 26.0), size(0.5, 3.0), large_size(10.0, 24.0);
      const double x = at(rng), y = at(rng) / 2, z = at(rng), s = large ? large_size(rng) : size(rng);
      return Aabb{{x, y, z}, {x + s, y + s, z + s}};
    };
    // One reader queries box by box, the other in batches of 100 boxes (the batched query's sections).
    auto reader = [&](std::uint64_t seed, bool batched) {
      std::mt19937_64 rng(seed);
      std::vector<ChunkTouch> out;
      vtp::physics::TouchBatch batch;
      std::vector<Aabb> boxes(100);
      for (unsigned i = 0; !done; ++i) {
        if (!batched) {
          if (!index.query(box(rng, i % 4 == 0), out).ok()) failed = true;
          continue;
        }
        for (std::size_t k = 0; k < boxes.size(); ++k) boxes[k] = box(rng, k % 4 == 0);
        if (!index.query(boxes, batch).ok() || batch.boxes() != boxes.size()) failed = true;
      }
    };
    std::vector<Aabb> last(8);
    std::thread mover([&] {
      std::mt19937_64 rng(93);
      PairChanges changes;
      std::vector<vtp::physics::BodyBox> moves(3);
      for (unsigned i = 0; !done; ++i) {
        if (i % 2 == 0) {  // one body, then three in one batched update
          const std::uint64_t body = rng() % last.size();
          last[body] = box(rng);
          if (!tracker.update(body, last[body], changes).ok()) failed = true;
        } else {
          for (auto& m : moves) {
            m.body = rng() % last.size();
            m.box = last[m.body] = box(rng);
          }
          if (!tracker.update(moves, changes).ok()) failed = true;
        }
        REQUIRE(tracker.takeEditChanges(changes).ok());
      }
    });
    std::thread a(reader, 94, false), b(reader, 95, true);
    editor.join();
    a.join();
    b.join();
    mover.join();
    CHECK_FALSE(failed.load());

    auto fresh = MaskIndex::create(*world);
    REQUIRE(fresh.ok());
    for (std::int32_t z = -4; z <= 4; ++z)
      for (std::int32_t y = -3; y <= 3; ++y)
        for (std::int32_t x = -4; x <= 4; ++x) CHECK(index.masks({x, y, z}) == (*fresh)->masks({x, y, z}));
    for (std::uint64_t body = 0; body < last.size(); ++body) {
      if (tracker.pairs(body).empty() && last[body].min.x == 0 && last[body].max.x == 0) continue;  // never moved
      std::vector<ChunkTouch> expected;
      REQUIRE((*fresh)->query(last[body], expected).ok());
      std::size_t pairs = 0;
      for (const ChunkTouch& t : expected) pairs += (t.solid ? 1 : 0) + (t.water ? 1 : 0);
      CHECK(tracker.pairs(body).size() == pairs);
    }
  }

  SUBCASE("a caller applying update() and takeEditChanges() lists in turn holds exactly the tracker's pairs") {
    // As BulletTerrain does each step: the edit changes, then the body's update. An edit between the two once
    // queued a change against the old pairs after update() had reported against the new ones, so the caller removed
    // pairs it lacked and added pairs it held (manifolds leaked or doubled in the adapter).
    using Key = std::tuple<std::uint64_t, ChunkCoord, vtp::physics::PairKind>;
    std::size_t rounds = 0, bad_adds = 0, bad_removes = 0, mismatched = 0;
    std::atomic<bool> failed{false};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (std::chrono::steady_clock::now() < deadline && rounds < 40) {
      ++rounds;
      auto world = vtp::test::makeWorld();
      auto created = MaskIndex::create(*world);
      REQUIRE(created.ok());
      PairTracker tracker(**created);
      std::atomic<bool> stop{false};
      std::thread editor([&] {  // a 4^3 block in chunk (1, 0, 0), on and off
        const VoxelBox block{{10, 2, 2}, {14, 6, 6}};
        for (int i = 0; !stop.load(std::memory_order_relaxed); ++i) {
          if (!(i % 2 == 0 ? world->fillBox(block, 2) : world->clearBox(block)).ok()) failed = true;
        }
      });
      std::multiset<Key> held;
      auto apply = [&](const PairChanges& c) {
        for (const auto& p : c.removed) {
          const auto it = held.find({p.body, p.chunk, p.kind});
          if (it == held.end()) ++bad_removes;
          else held.erase(it);
        }
        for (const auto& p : c.added) {
          if (held.count({p.body, p.chunk, p.kind}) != 0) ++bad_adds;
          held.insert({p.body, p.chunk, p.kind});
        }
      };
      PairChanges changes;
      const Aabb near{{9, 1, 1}, {15, 7, 7}}, far{{40, 1, 1}, {41, 2, 2}};
      for (int step = 0; step < 5000; ++step) {
        REQUIRE(tracker.takeEditChanges(changes).ok());
        apply(changes);
        if (!tracker.update(7, step % 2 ? near : far, changes).ok()) failed = true;
        apply(changes);
      }
      stop = true;
      editor.join();
      REQUIRE(tracker.takeEditChanges(changes).ok());
      apply(changes);
      std::multiset<Key> truth;
      for (const auto& p : tracker.pairs(7)) truth.insert({p.body, p.chunk, p.kind});
      mismatched += truth != held ? 1 : 0;
    }
    CHECK_FALSE(failed.load());
    CHECK(bad_adds == 0);
    CHECK(bad_removes == 0);
    CHECK(mismatched == 0);
    MESSAGE(rounds << " rounds of 5,000 steps");
  }
}
