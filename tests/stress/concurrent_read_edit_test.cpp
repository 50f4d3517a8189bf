// Readers and an editor at once (run under TSan in CI, label `tsan`): the thread-safety contract of world.h.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "support/random_world.h"
#include "vtp/terrain/world.h"
#include "vtp/terrain/world_file.h"

using namespace vtp::terrain;

namespace {

// Version v of a watched chunk: every voxel derived from v, so a torn read (two versions mixed) is detectable.
Voxel pattern(std::uint64_t v, int i) {
  return {std::uint8_t(2 + v % 5), std::uint8_t(1 + (v + std::uint64_t(i)) % 255)};
}

std::vector<Voxel> patternChunk(std::uint64_t v) {
  std::vector<Voxel> out(kChunkVolume);
  for (int i = 0; i < kChunkVolume; ++i) out[std::size_t(i)] = pattern(v, i);
  return out;
}

// True when the 512 voxels are exactly pattern(v) for some v.
bool isSomePattern(const Voxel* voxels) {
  const std::uint64_t v = std::uint64_t(voxels[0].occupancy - 1);
  for (int i = 0; i < kChunkVolume; ++i) {
    if (voxels[i].material != voxels[0].material || voxels[i] != Voxel{voxels[0].material, pattern(v, i).occupancy}) {
      return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("World concurrency") {
  SUBCASE("4 readers see whole chunk versions while 1 editor rewrites, grows and shrinks the world") {
    auto world = vtp::test::makeWorld();
    const ChunkCoord watched{-1, 0, 2};
    const VoxelBox watched_box = chunkBox(watched);
    REQUIRE(world->writeRegion(watched_box, patternChunk(1)).ok());

    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> reads{0};
    std::atomic<int> failures{0};
    auto reader = [&](int id) {
      std::vector<Voxel> box(kChunkVolume);
      std::uint64_t last_version = 0;
      std::size_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        if (id % 2 == 0) {
          // readBox over exactly the watched chunk: one version, never a mix.
          if (!world->readBox(watched_box, box).ok() || !isSomePattern(box.data())) failures.fetch_add(1);
        } else {
          // A pinned chunk pointer: its content matches its version, versions never go backwards, and the chunk
          // is never older than the version chunkVersion() reported just before.
          const std::uint64_t announced = world->chunkVersion(watched);
          auto guard = world->read();
          const Chunk* c = world->chunk(guard, watched);
          if (c == nullptr || c->isUniform() || c->version() < last_version || c->version() < announced) {
            failures.fetch_add(1);
          } else {
            last_version = c->version();
            if (!isSomePattern(c->dense().data())) failures.fetch_add(1);
          }
        }
        // Reads of chunks the editor inserts and removes must not crash or tear either.
        const Voxel v = world->voxel({std::int32_t(n % 200) * 8, 64, 0});
        if (!isCanonical(v)) failures.fetch_add(1);
        ++n;
      }
      reads.fetch_add(n);
    };
    std::vector<std::thread> readers;
    for (int i = 0; i < 4; ++i) readers.emplace_back(reader, i);

    // The editor: rewrites the watched chunk, inserts far-away chunks (growing the map), clears them, and saves.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    std::uint64_t edits = 0;
    while (std::chrono::steady_clock::now() < deadline && edits < 3000) {
      ++edits;
      REQUIRE(world->writeRegion(watched_box, patternChunk(edits + 1)).ok());
      const std::int32_t x = std::int32_t(edits % 200) * 8;
      if (edits % 3 == 0) {
        REQUIRE(world->clearBox({{x, 64, 0}, {x + 8, 72, 8}}).ok());
      } else {
        REQUIRE(world->fillSphere({x + 4.0, 68.0, 4.0}, 3.0, 2).ok());
      }
      if (edits % 500 == 0) CHECK(decodeWorld(encodeWorld(*world)).ok());
    }
    stop = true;
    for (auto& t : readers) t.join();
    CHECK(failures.load() == 0);
    CHECK(reads.load() > 0);
    CHECK(edits > 10);
    auto guard = world->read();
    CHECK(world->chunk(guard, watched)->version() == edits + 1);
  }
}
