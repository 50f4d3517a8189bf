// The collider cache's per-shard map (physics/src/cache/chunk_pointer_map.h, white-box) against std::map over random
// inserts, erases and lookups: keys from a small cube around the origin (negative coordinates, long probe runs) and
// keys of one shard only (equal low hash bits, which the map skips), through growth and backward-shift deletion.
#include "cache/chunk_pointer_map.h"

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <vector>

using namespace vtp::terrain;
using namespace vtp::physics;

namespace {

// Runs `steps` random operations on a map and a model; returns the number of disagreements.
int churn(std::uint64_t seed, int hash_shift, const std::vector<ChunkCoord>& keys, int steps) {
  std::mt19937_64 rng(seed);
  ChunkPointerMap<int> map(hash_shift);
  std::map<ChunkCoord, int*> model;
  std::vector<int> values(keys.size());
  int bad = 0;
  for (int step = 0; step < steps; ++step) {
    const std::size_t k = rng() % keys.size();
    const ChunkCoord c = keys[k];
    const auto it = model.find(c);
    switch (rng() % 3) {
      case 0:  // insert when absent
        if (it == model.end()) {
          map.insert(c, &values[k]);
          model.emplace(c, &values[k]);
        }
        break;
      case 1:
        map.erase(c);
        if (it != model.end()) model.erase(it);
        break;
      default:
        break;
    }
    // Every few steps, every key: present ones map to their value, absent ones to nullptr.
    if (step % 64 == 0 || step == steps - 1) {
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const auto m = model.find(keys[i]);
        bad += map.find(keys[i]) != (m == model.end() ? nullptr : m->second) ? 1 : 0;
      }
      bad += map.size() != model.size() ? 1 : 0;
      std::size_t visited = 0;
      map.forEach([&](ChunkCoord key, int* value) {
        ++visited;
        const auto m = model.find(key);
        bad += m == model.end() || m->second != value ? 1 : 0;
      });
      bad += visited != model.size() ? 1 : 0;
    }
  }
  return bad;
}

}  // namespace

TEST_CASE("ChunkPointerMap: equals std::map under random inserts and erases") {
  std::vector<ChunkCoord> cube;
  for (int z = -4; z < 4; ++z)
    for (int y = -4; y < 4; ++y)
      for (int x = -4; x < 4; ++x) cube.push_back({x, y, z});
  CHECK(churn(1, 0, cube, 20000) == 0);
  CHECK(churn(2, 6, cube, 20000) == 0);
  // Keys of one shard of 64, as the collider cache gives a shard's map: their hashes share the low 6 bits.
  std::vector<ChunkCoord> shard;
  for (int z = -20; z < 20 && shard.size() < 300; ++z)
    for (int y = -20; y < 20; ++y)
      for (int x = -20; x < 20; ++x) {
        const ChunkCoord c{x * 37, y, z * 1000};
        if ((chunkHash(c) & 63) == 5 && shard.size() < 300) shard.push_back(c);
      }
  REQUIRE(shard.size() == 300);
  CHECK(churn(3, 6, shard, 20000) == 0);
}

TEST_CASE("ChunkPointerMap: one shard's keys spread over its slots by the hash bits above the shard's") {
  // 2,000 keys whose hashes share the low 6 bits: indexed by those bits too, they would land on 1 slot in 64 and
  // probe runs would be three times as long.
  ChunkPointerMap<int> map(6);
  int value = 0;
  int n = 0;
  for (int z = -200; z < 200 && n < 2000; ++z)
    for (int x = -200; x < 200 && n < 2000; ++x) {
      const ChunkCoord c{x, z % 7, z};
      if ((chunkHash(c) & 63) != 17) continue;
      map.insert(c, &value);
      ++n;
    }
  REQUIRE(map.size() == 2000);
  CHECK(map.maxDisplacement() < 24);  // 14 here; 45 when indexed by all the hash bits
}
