// ColliderCache::validate after random edits and query storms (fixed seeds): small and large budgets (evictions),
// both uses (replacements of colliders without edge flags), pins held across edits (colliders dropped while pinned:
// the byte total counts them until their last pin goes), overflow builds. (A failing validate is not reachable here:
// the cache's state is private to collider_cache.cpp.)
#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "support/random_world.h"
#include "vtp/physics/collider_cache.h"

using namespace vtp::terrain;
using vtp::physics::ColliderCache;
using vtp::physics::ColliderCacheOptions;
using vtp::physics::ColliderUse;

namespace {

void checkValid(const ColliderCache& cache, const std::string& what) {
  const vtp::Status s = cache.validate();
  CHECK_MESSAGE(s.ok(), what << ": " << (s.ok() ? std::string() : s.error().message));
}

}  // namespace

TEST_CASE("collider cache validate: valid after every edit and query of a random storm, pins held across edits") {
  const VoxelBox region{{-20, -10, -20}, {20, 10, 20}};
  for (const std::size_t budget : {std::size_t(6) << 10, std::size_t(48) << 10, std::size_t(4) << 20}) {
    for (const std::uint64_t seed : {41u, 42u}) {
      auto world = vtp::test::makeWorld();
      REQUIRE(world->fillBox({{-20, -8, -20}, {20, -2, 20}}, 2).ok());
      std::mt19937_64 rng(seed);
      vtp::test::randomEdits(*world, region, 10, rng);
      auto created = ColliderCache::create(*world, ColliderCacheOptions{budget});
      REQUIRE(created.ok());
      ColliderCache& cache = **created;
      std::uniform_int_distribution<int> at(-3, 2);
      std::vector<ColliderCache::Pin> held;
      for (int i = 0; i < 600; ++i) {
        const std::string what = "budget " + std::to_string(budget) + ", seed " + std::to_string(seed) + ", step " +
                                 std::to_string(i);
        const ChunkCoord c{at(rng), at(rng) / 2, at(rng)};
        const ColliderUse use = rng() % 3 == 0 ? ColliderUse::kContacts : ColliderUse::kQueries;
        auto pin = cache.acquire(c, use);
        REQUIRE(pin.ok());
        if (rng() % 5 == 0) held.push_back(std::move(pin.value()));
        if (held.size() > 6) held.erase(held.begin() + std::ptrdiff_t(rng() % held.size()));
        if (i % 40 == 39) {
          vtp::test::randomEdits(*world, region, 1, rng);  // drops colliders, some of them pinned
          checkValid(cache, what + " (after an edit)");
        } else if (i % 10 == 0) {
          checkValid(cache, what);
        }
      }
      checkValid(cache, "budget " + std::to_string(budget) + ", seed " + std::to_string(seed) + ", pins held");
      held.clear();  // the dropped colliders' last pins: their bytes leave the total
      checkValid(cache, "budget " + std::to_string(budget) + ", seed " + std::to_string(seed) + ", pins released");
      // The storm went through every path: invalidations, replacements, and evictions under the small budgets.
      const auto st = cache.stats();
      CHECK(st.invalidations > 0);
      CHECK(st.upgrades > 0);
      if (budget < (std::size_t(1) << 20)) CHECK(st.evictions > 0);
    }
  }
}
