// "Nothing lost": a process killed at a random moment while saving leaves the old world or the new one, never a torn
// file (the RocksDB black-box style kill loop, bounded to a few seconds).
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iterator>
#include <random>
#include <thread>
#include <vector>

#include "support/random_world.h"
#include "vtp/terrain/file_replace.h"
#include "vtp/terrain/hash.h"
#include "vtp/terrain/world_file.h"

using namespace vtp::terrain;

TEST_CASE("saveWorldFile: a saver killed at random times leaves the old world or the new one") {
  SUBCASE("a saver killed at random times always leaves one of the two worlds it was writing") {
    auto a = vtp::test::makeWorld();
    auto b = vtp::test::makeWorld();
    std::mt19937_64 rng(5);
    vtp::test::randomEdits(*a, {{-30, -30, -30}, {30, 30, 30}}, 80, rng);
    vtp::test::randomEdits(*b, {{-30, -30, -30}, {30, 30, 30}}, 80, rng);
    const std::vector<std::uint8_t> bytes_a = encodeWorld(*a), bytes_b = encodeWorld(*b);
    const std::uint64_t hash_a = fnv1a64(bytes_a);
    const std::uint64_t hash_b = fnv1a64(bytes_b);
    REQUIRE(hash_a != hash_b);

    const auto dir = std::filesystem::temp_directory_path() / ("vtp_save_crash_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto path = dir / "world.vtw";
    REQUIRE(saveWorldFile(*a, path).ok());

    int kills = 0;
    for (int round = 0; round < 12; ++round) {
      const pid_t child = ::fork();
      REQUIRE(child >= 0);
      if (child == 0) {
        // The child saves the two worlds alternately until killed: as saveWorldFile does (encodeWorld, then
        // replaceFile), with the encoding done once, so that most kills land in the write.
        for (std::uint64_t i = 0;; ++i) (void)replaceFile(i % 2 ? bytes_a : bytes_b, path);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(2000 + rng() % 30000));
      ::kill(child, SIGKILL);
      int status = 0;
      ::waitpid(child, &status, 0);
      kills += WIFSIGNALED(status);
      auto loaded = loadWorldFile(path);
      REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.error().message));
      const std::uint64_t h = fnv1a64(encodeWorld(*loaded->world));
      CHECK((h == hash_a || h == hash_b));
    }
    CHECK(kills == 12);
    // Killed saves leave orphaned temp files; they are never what load reads, and they do not block later saves.
    REQUIRE(saveWorldFile(*a, path).ok());
    CHECK(fnv1a64(encodeWorld(*loadWorldFile(path)->world)) == hash_a);
    // Once old enough they go (their writers' locks died with them); the world stays.
    std::size_t orphans = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) orphans += e.path().filename() != "world.vtw";
    CHECK(orphans >= 1);
    CHECK(removeOrphanedTempFiles(path, 0) == orphans);
    CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) == 1);
    MESSAGE("orphaned temp files after 12 kills: " << orphans);
    std::filesystem::remove_all(dir);
  }
}
