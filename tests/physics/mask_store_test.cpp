// The mask store's line allocation against a model: random allocations (one line, or an even pair for masks with
// water) and releases over several segments, each place filled with its own words; live places never share a line, a
// pair never straddles a segment, every place reads back what it holds, the sentinels keep theirs, and the owned line
// count is the model's.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>
#include <vector>

#include "broadphase/mask_store.h"

using namespace vtp::physics;

namespace {

// Words unique to `id`, with water words only when it has water.
ChunkMasks masksOf(std::uint64_t id, bool water) {
  ChunkMasks m{MaskTag::kMixed, {}, {}};
  for (std::size_t y = 0; y < 8; ++y) {
    m.solid[y] = id * 16 + y;
    m.water[y] = water ? id * 16 + 8 + y : 0;
  }
  return m;
}

void checkReads(const MaskStore& store, MaskStore::Place p, const ChunkMasks& m) {
  const std::uint64_t* solid = store.solid(p);
  const std::uint64_t* water = store.water(p);
  for (std::size_t y = 0; y < 8; ++y) {
    REQUIRE(solid[y] == m.solid[y]);
    REQUIRE(water[y] == m.water[y]);
  }
}

}  // namespace

TEST_CASE("MaskStore: line allocation under random allocations and releases matches a model") {
  std::mt19937_64 rng(20261127);
  MaskStore store;
  struct Live {
    MaskStore::Place place;
    ChunkMasks masks;
  };
  std::map<std::uint64_t, Live> live;  // by id
  std::uint64_t next_id = 1;
  std::size_t owned = 0;
  for (int step = 0; step < 20000; ++step) {
    // Grow to about 3,000 places (over 4 segments of 1024 lines), then churn; water in one place of 8.
    const bool add = live.empty() || (live.size() < 3000 ? rng() % 4 != 0 : rng() % 2 == 0);
    if (add) {
      const bool water = rng() % 8 == 0;
      const MaskStore::Place p = store.allocate(water);
      REQUIRE(p.water == water);
      REQUIRE(MaskStore::owned(p));
      if (water) {
        CHECK(p.line % 2 == 0);  // an even pair: both lines in one segment
      }
      const ChunkMasks m = masksOf(next_id, water);
      store.store(p, m);
      live[next_id++] = {p, m};
      owned += water ? 2 : 1;
    } else {
      auto it = live.begin();
      std::advance(it, std::ptrdiff_t(rng() % live.size()));
      store.release(it->second.place);
      owned -= it->second.place.water ? 2 : 1;
      live.erase(it);
    }
    REQUIRE(store.ownedLines() == owned);
    if (step % 1000 == 999) {
      std::set<std::uint32_t> lines;
      for (const auto& [id, l] : live) {
        REQUIRE(lines.insert(l.place.line).second);
        if (l.place.water) REQUIRE(lines.insert(l.place.line + 1).second);
        checkReads(store, l.place, l.masks);
      }
    }
  }
  for (const auto& [id, l] : live) checkReads(store, l.place, l.masks);
  // The sentinels.
  constexpr std::uint64_t kOnes = ~std::uint64_t(0);
  const SliceMask ones{kOnes, kOnes, kOnes, kOnes, kOnes, kOnes, kOnes, kOnes};
  checkReads(store, MaskStore::kNoMasks, ChunkMasks{});
  checkReads(store, MaskStore::kAllSolid, ChunkMasks{MaskTag::kMixed, ones, {}});
  checkReads(store, MaskStore::kAllWater, ChunkMasks{MaskTag::kMixed, {}, ones});
  CHECK(MaskStore::sharedPlace(ChunkMasks{MaskTag::kMixed, ones, {}})->line == MaskStore::kAllSolid.line);
  CHECK(MaskStore::sharedPlace(ChunkMasks{MaskTag::kMixed, {}, ones})->line == MaskStore::kAllWater.line);
  CHECK_FALSE(MaskStore::sharedPlace(masksOf(7, false)).has_value());
  CHECK(MaskStore::hasWater(masksOf(7, true)));
  CHECK_FALSE(MaskStore::hasWater(masksOf(7, false)));
}
