// Readers and an editor at once (run under TSan in CI, label `tsan`): the thread-safety contract of world.h.
#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
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

TEST_CASE("World: readers see whole chunk versions and listeners run without deadlock while threads edit") {
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

  SUBCASE("readBoxBetweenEdits never mixes two chunks that one edit rewrites together") {
    // Each edit rewrites two chunks as one region, both with one version's pattern; a plain readBox may see one new
    // and one old (chunks publish one at a time), readBoxBetweenEdits never.
    auto world = vtp::test::makeWorld();
    const VoxelBox pair{{0, 0, 0}, {16, 8, 8}};
    auto twoChunks = [](std::uint64_t v) {
      std::vector<Voxel> out(2 * kChunkVolume);
      for (int z = 0; z < 8; ++z) {
        for (int y = 0; y < 8; ++y) {
          for (int x = 0; x < 16; ++x) out[std::size_t(x + 16 * (y + 8 * z))] = pattern(v, chunkIndex(x % 8, y, z));
        }
      }
      return out;
    };
    REQUIRE(world->writeRegion(pair, twoChunks(1)).ok());
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> reads{0}, mixed{0}, plain_mixed{0};
    std::vector<std::thread> readers;
    for (int id = 0; id < 2; ++id) {
      readers.emplace_back([&, id] {
        std::vector<Voxel> box(2 * kChunkVolume);
        while (!stop.load(std::memory_order_relaxed)) {
          const bool between = id == 0;
          const vtp::Status st = between ? world->readBoxBetweenEdits(pair, box) : world->readBox(pair, box);
          // Voxel 0 of each chunk tells its version; the halves must agree.
          const bool same = st.ok() && box[0] == box[8];
          if (!same) (between ? mixed : plain_mixed).fetch_add(1);
          if (between) reads.fetch_add(1);
        }
      });
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    std::uint64_t edits = 0;
    while (std::chrono::steady_clock::now() < deadline && edits < 20000) {
      ++edits;
      REQUIRE(world->writeRegion(pair, twoChunks(edits + 1)).ok());
    }
    stop = true;
    for (auto& t : readers) t.join();
    CHECK(mixed.load() == 0);
    CHECK(reads.load() > 0);
    MESSAGE(reads.load() << " reads between edits over " << edits << " edits; plain readBox mixed "
                         << plain_mixed.load() << " times");
  }

  SUBCASE("listeners snapshot and save while two threads edit: no deadlock") {
    // A listener runs under the notify lock; snapshot() once took the edit lock, which a second editor holds while it
    // waits for the notify lock: a deadlock within a few thousand edits. A watchdog ends the process if edits stall.
    auto world = vtp::test::makeWorld();
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("vtp_listener_save_" + std::to_string(::getpid()) + ".vtw")).string();
    std::atomic<std::uint64_t> progress{0}, snapshots{0};
    Subscription sub = world->subscribe([&](std::span<const ChangeEvent>) {
      if (snapshots.fetch_add(1) % 500 == 0) {
        CHECK(saveWorldFile(*world, path).ok());
      } else {
        CHECK(world->snapshot().chunks().size() <= 2);
      }
    });
    std::atomic<bool> stop{false};
    std::vector<std::thread> editors;
    for (int t = 0; t < 2; ++t) {
      editors.emplace_back([&, t] {
        for (int i = 0; !stop.load(std::memory_order_relaxed) && i < 20000; ++i) {
          CHECK(world->setVoxel({t * 8, 0, 0}, Voxel{2, std::uint8_t(1 + i % 255)}).ok());
          progress.fetch_add(1);
        }
      });
    }
    std::atomic<bool> joined{false};
    std::thread watchdog([&] {
      std::uint64_t last = ~0ull;
      while (!joined.load()) {
        for (int i = 0; i < 100 && !joined.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const std::uint64_t now = progress.load();
        if (!joined.load() && now == last) {
          std::fprintf(stderr, "no edit finished for 5 s after %llu edits: deadlock\n", (unsigned long long)now);
          std::_Exit(1);
        }
        last = now;
      }
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < deadline && progress.load() < 40000) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stop = true;
    for (auto& t : editors) t.join();
    joined = true;
    watchdog.join();
    sub.reset();
    std::filesystem::remove(path);
    CHECK(snapshots.load() == progress.load());
    MESSAGE(progress.load() << " edits by 2 threads, each followed by a listener's snapshot or save");
  }
}
