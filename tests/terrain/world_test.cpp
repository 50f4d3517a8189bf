#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "support/random_world.h"
#include "support/alloc_probe.h"
#include "vtp/terrain/world.h"
#include "vtp/terrain/world_file.h"

using namespace vtp::terrain;
using vtp::ErrorCode;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The coverage level edit.h prescribes for a sphere at voxel v (brute force, written out independently).
int sphereLevel(Vec3d c, double r, VoxelCoord v) {
  const double dx = v.x + 0.5 - c.x, dy = v.y + 0.5 - c.y, dz = v.z + 0.5 - c.z;
  const double cov = std::clamp(0.5 + r - std::sqrt(dx * dx + dy * dy + dz * dz), 0.0, 1.0);
  return int(std::lround(255.0 * cov));
}

}  // namespace

TEST_CASE("coordinates: a chunk's box grown by an apron, negative chunks included") {
  CHECK(grown(chunkBox({-1, 0, 2}), 2) == VoxelBox{{-10, -2, 14}, {2, 10, 26}});
  CHECK(grown(chunkBox({0, 0, 0}), 1).volume() == 1000);
  CHECK(grown(grown(chunkBox({3, -4, 5}), 2), -2) == chunkBox({3, -4, 5}));
}

TEST_CASE("coordinates: the chunks a box overlaps, against counting them one by one") {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::int32_t> at(-40, 40), size(0, 30);
  for (int i = 0; i < 2000; ++i) {
    const VoxelCoord lo{at(rng), at(rng), at(rng)};
    const VoxelBox box{lo, {lo.x + size(rng), lo.y + size(rng), lo.z + size(rng)}};
    std::int64_t overlapped = 0;
    for (std::int32_t cz = -6; cz <= 10; ++cz)
      for (std::int32_t cy = -6; cy <= 10; ++cy)
        for (std::int32_t cx = -6; cx <= 10; ++cx) overlapped += !intersect(chunkBox({cx, cy, cz}), box).empty();
    REQUIRE(chunkCount(box) == overlapped);
  }
  constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
  constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
  CHECK(chunkCount({{kMin, kMin, kMin}, {kMax, kMax, kMax}}) == std::numeric_limits<std::int64_t>::max());
  CHECK(chunkCount({{kMin, 0, 0}, {kMax, 1, 1}}) == std::int64_t(1) << 29);
}

TEST_CASE("World: shape edits and reads and listeners and batches follow the rules of world.h") {
  auto world = vtp::test::makeWorld();

  SUBCASE("a new world is all air and stores nothing") {
    CHECK(world->voxel({0, 0, 0}) == kAir);
    CHECK(world->voxel({-(kStorageLimit - 1), 0, kStorageLimit - 1}) == kAir);
    CHECK(world->stats().stored_chunks == 0);
  }

  SUBCASE("a filled box reads back inside and leaves its border untouched") {
    const VoxelBox box{{-5, -3, 6}, {4, 9, 17}};
    REQUIRE(world->fillBox(box, 2).ok());
    for (std::int32_t z = box.min.z - 1; z <= box.max.z; ++z) {
      for (std::int32_t y = box.min.y - 1; y <= box.max.y; ++y) {
        for (std::int32_t x = box.min.x - 1; x <= box.max.x; ++x) {
          const Voxel expected = box.contains({x, y, z}) ? Voxel{2, 255} : kAir;
          REQUIRE(world->voxel({x, y, z}) == expected);
        }
      }
    }
  }

  SUBCASE("an edit reports the changed box, the changed chunks in order, and bumps their versions") {
    auto r = world->fillBox({{-1, 0, 0}, {1, 1, 1}}, 3);
    REQUIRE(r.ok());
    CHECK(r->changed == VoxelBox{{-1, 0, 0}, {1, 1, 1}});
    REQUIRE(r->chunks.size() == 2);
    CHECK(r->chunks[0] == ChunkCoord{-1, 0, 0});
    CHECK(r->chunks[1] == ChunkCoord{0, 0, 0});
    CHECK(world->chunkVersion({-1, 0, 0}) == 1);
    CHECK(world->chunkVersion({0, 0, 0}) == 1);
    // Filling the same material again changes nothing: no chunks, no version bump.
    auto again = world->fillBox({{-1, 0, 0}, {1, 1, 1}}, 3);
    REQUIRE(again.ok());
    CHECK(again->chunks.empty());
    CHECK(again->changed.empty());
    CHECK(world->chunkVersion({0, 0, 0}) == 1);
  }

  SUBCASE("voxel -1 lies in chunk -1 (floor division at negative coordinates)") {
    REQUIRE(world->setVoxel({-1, -1, -1}, {2, 200}).ok());
    auto guard = world->read();
    const Chunk* c = world->chunk(guard, {-1, -1, -1});
    REQUIRE(c != nullptr);
    CHECK(c->at(7, 7, 7) == Voxel{2, 200});
    CHECK(world->chunk(guard, {0, 0, 0}) == nullptr);
  }

  SUBCASE("sphere fill follows the coverage rule at the rim") {
    const Vec3d c{3.3, -2.7, 0.4};
    const double r = 4.6;
    REQUIRE(world->fillSphere(c, r, 4).ok());
    int partial = 0;
    for (std::int32_t z = -8; z < 8; ++z) {
      for (std::int32_t y = -10; y < 6; ++y) {
        for (std::int32_t x = -4; x < 11; ++x) {
          const int level = sphereLevel(c, r, {x, y, z});
          const Voxel expected = level == 0 ? kAir : Voxel{4, std::uint8_t(level)};
          REQUIRE(world->voxel({x, y, z}) == expected);
          partial += level > 0 && level < 255;
        }
      }
    }
    CHECK(partial > 50);  // the rim really is fractional
  }

  SUBCASE("fill meets existing voxels by the documented rules") {
    REQUIRE(world->setVoxel({0, 0, 0}, {kWaterMaterial, 200}).ok());
    REQUIRE(world->setVoxel({1, 0, 0}, {2, 100}).ok());
    REQUIRE(world->setVoxel({2, 0, 0}, {3, 100}).ok());
    REQUIRE(world->fillBox({{0, 0, 0}, {3, 1, 1}}, 3).ok());
    CHECK(world->voxel({0, 0, 0}) == Voxel{3, 255});  // solid c >= 128 displaces water
    CHECK(world->voxel({1, 0, 0}) == Voxel{2, 255});  // fill does not repaint another solid
    CHECK(world->voxel({2, 0, 0}) == Voxel{3, 255});  // same material: max occupancy
    // Water poured over a solid leaves it alone; over air it fills.
    REQUIRE(world->fillBox({{0, 0, 0}, {4, 1, 1}}, kWaterMaterial).ok());
    CHECK(world->voxel({0, 0, 0}) == Voxel{3, 255});
    CHECK(world->voxel({3, 0, 0}) == Voxel{kWaterMaterial, 255});
  }

  SUBCASE("a thin solid does not displace water") {
    REQUIRE(world->setVoxel({0, 0, 0}, {kWaterMaterial, 255}).ok());
    // A sphere whose rim covers voxel 0 by less than half: c < 128.
    REQUIRE(world->fillSphere({0.5, 0.5, -3.7}, 3.5, 2).ok());
    const Voxel v = world->voxel({0, 0, 0});
    CHECK(v.material == kWaterMaterial);
  }

  SUBCASE("clear lowers occupancy and turns emptied voxels into air, removing empty chunks") {
    REQUIRE(world->fillBox({{0, 0, 0}, {8, 8, 8}}, 2).ok());
    CHECK(world->stats().stored_chunks == 1);
    CHECK(world->stats().uniform_chunks == 1);
    REQUIRE(world->clearSphere({4, 4, 4}, 2.2).ok());
    CHECK(world->voxel({4, 4, 4}) == kAir);
    CHECK(world->stats().dense_chunks == 1);
    REQUIRE(world->clearBox({{0, 0, 0}, {8, 8, 8}}).ok());
    CHECK(world->stats().stored_chunks == 0);
    CHECK(world->chunkVersion({0, 0, 0}) == 3);  // the version survives the chunk becoming air
  }

  SUBCASE("an edited chunk that becomes uniform again is compacted") {
    REQUIRE(world->fillBox({{0, 0, 0}, {8, 8, 8}}, 2).ok());
    REQUIRE(world->setVoxel({3, 3, 3}, {5, 255}).ok());
    CHECK(world->stats().dense_chunks == 1);
    REQUIRE(world->setVoxel({3, 3, 3}, {2, 255}).ok());
    CHECK(world->stats().dense_chunks == 0);
    CHECK(world->stats().uniform_chunks == 1);
  }

  SUBCASE("paint changes solid voxels only and keeps occupancy") {
    REQUIRE(world->setVoxel({0, 0, 0}, {2, 140}).ok());
    REQUIRE(world->setVoxel({1, 0, 0}, {kWaterMaterial, 90}).ok());
    REQUIRE(world->paintSphere({1, 0.5, 0.5}, 3, 5).ok());
    CHECK(world->voxel({0, 0, 0}) == Voxel{5, 140});
    CHECK(world->voxel({1, 0, 0}) == Voxel{kWaterMaterial, 90});
    CHECK(world->voxel({2, 0, 0}) == kAir);
  }

  SUBCASE("replace swaps one material for another inside the box only") {
    REQUIRE(world->fillBox({{0, 0, 0}, {4, 1, 1}}, 2).ok());
    REQUIRE(world->replace({{1, 0, 0}, {3, 1, 1}}, 2, 4).ok());
    CHECK(world->voxel({0, 0, 0}) == Voxel{2, 255});
    CHECK(world->voxel({1, 0, 0}) == Voxel{4, 255});
    CHECK(world->voxel({2, 0, 0}) == Voxel{4, 255});
    CHECK(world->voxel({3, 0, 0}) == Voxel{2, 255});
  }

  SUBCASE("cylinder covers its radius and its height") {
    REQUIRE(world->fillCylinder({0, 0, 0}, 3, 10, 3).ok());
    CHECK(world->voxel({0, 4, 0}) == Voxel{3, 255});   // centres 4.5 and -4.5 lie half a voxel inside the caps
    CHECK(world->voxel({0, -5, 0}) == Voxel{3, 255});
    CHECK(world->voxel({0, 5, 0}) == kAir);
    CHECK(world->voxel({0, -6, 0}) == kAir);
    CHECK(world->voxel({1, 0, 0}) == Voxel{3, 255});
    // Radial rim: centre (2.5, 0.5) lies sqrt(6.5) from the axis.
    const auto rim = std::uint8_t(std::lround(255.0 * (0.5 + 3.0 - std::sqrt(6.5))));
    CHECK(world->voxel({2, 0, 0}) == Voxel{3, rim});
    CHECK(world->voxel({4, 0, 0}) == kAir);
  }

  SUBCASE("writeRegion and readBox round-trip through chunk borders and negative coordinates") {
    std::mt19937_64 rng(7);
    const VoxelBox box{{-13, -9, -20}, {5, 3, 1}};
    std::vector<Voxel> in(std::size_t(box.volume()));
    for (Voxel& v : in) v = vtp::test::randomVoxel(rng);
    REQUIRE(world->writeRegion(box, in).ok());
    std::vector<Voxel> out(in.size());
    REQUIRE(world->readBox(box, out).ok());
    CHECK(out == in);
  }

  SUBCASE("readBox matches voxel-by-voxel reads on random worlds and boxes") {
    std::mt19937_64 rng(11);
    vtp::test::randomEdits(*world, {{-40, -40, -40}, {40, 40, 40}}, 120, rng);
    for (int i = 0; i < 200; ++i) {
      auto pick = [&](int span) { return std::int32_t(rng() % std::uint64_t(span)) - span / 2; };
      const VoxelCoord lo{pick(80), pick(80), pick(80)};
      const VoxelBox box{lo, {lo.x + 1 + pick(24) + 12, lo.y + 1 + pick(24) + 12, lo.z + 1 + pick(24) + 12}};
      std::vector<Voxel> out(std::size_t(box.volume()));
      REQUIRE(world->readBox(box, out).ok());
      REQUIRE(out == vtp::test::voxelsOneByOne(*world, box));
    }
    // Wider than 8 chunks (segments on the heap), and thin boxes.
    for (const VoxelBox& box : {VoxelBox{{-45, -3, 2}, {44, 1, 4}}, VoxelBox{{-40, 7, -40}, {40, 8, 40}},
                                VoxelBox{{3, -40, 3}, {4, 40, 4}}}) {
      std::vector<Voxel> out(std::size_t(box.volume()));
      REQUIRE(world->readBox(box, out).ok());
      REQUIRE(out == vtp::test::voxelsOneByOne(*world, box));
    }
    // The 10^3 box of a chunk (chunk + 1-voxel apron) and the 12^3 box (the fast path).
    for (int i = 0; i < 50; ++i) {
      const ChunkCoord c{std::int32_t(rng() % 10) - 5, std::int32_t(rng() % 10) - 5, std::int32_t(rng() % 10) - 5};
      for (int apron : {1, 2}) {
        const VoxelCoord o = chunkOrigin(c);
        const VoxelBox box{{o.x - apron, o.y - apron, o.z - apron}, {o.x + 8 + apron, o.y + 8 + apron, o.z + 8 + apron}};
        std::vector<Voxel> out(std::size_t(box.volume()));
        REQUIRE(world->readBox(box, out).ok());
        REQUIRE(out == vtp::test::voxelsOneByOne(*world, box));
      }
    }
  }

  SUBCASE("readBox of apron boxes whose neighbours are uniform chunks of many different values") {
    // The fast path keeps a few uniform patterns on the stack and falls back to the general path beyond them; both
    // must read the same voxels. Neighbourhoods with 1..26 distinct uniform values, plus one dense chunk.
    for (int distinct : {1, 2, 4, 5, 26}) {
      auto w = vtp::test::makeWorld();
      std::vector<EditCommand> batch;
      int n = 0;
      for (std::int32_t cz = -1; cz <= 1; ++cz) for (std::int32_t cy = -1; cy <= 1; ++cy) for (std::int32_t cx = -1; cx <= 1; ++cx) {
        const VoxelCoord o = chunkOrigin({cx + 3, cy - 2, cz});
        const VoxelBox chunk_box{o, {o.x + 8, o.y + 8, o.z + 8}};
        const auto value = std::uint8_t(10 * (n++ % distinct) + 5);
        batch.push_back(WriteRegionEdit{chunk_box, std::vector<Voxel>(512, Voxel{2, value})});
      }
      batch.push_back(SetVoxelEdit{{3 * 8 + 4, -2 * 8 + 1, 7}, Voxel{3, 255}});
      REQUIRE(w->apply(batch).ok());
      for (int apron : {1, 2}) {
        for (const ChunkCoord c : {ChunkCoord{3, -2, 0}, ChunkCoord{4, -1, 1}, ChunkCoord{2, -3, -1}}) {
          const VoxelCoord o = chunkOrigin(c);
          const VoxelBox box{{o.x - apron, o.y - apron, o.z - apron},
                             {o.x + 8 + apron, o.y + 8 + apron, o.z + 8 + apron}};
          std::vector<Voxel> out(std::size_t(box.volume()));
          REQUIRE(w->readBox(box, out).ok());
          REQUIRE(out == vtp::test::voxelsOneByOne(*w, box));
        }
      }
    }
  }

  SUBCASE("readBox at the edge of storage reads air beyond it") {
    const std::int32_t edge = kStorageLimit - 1;
    REQUIRE(world->setVoxel({edge, edge, edge}, {2, 255}).ok());
    const VoxelBox box{{edge - 1, edge - 1, edge - 1}, {edge + 2, edge + 2, edge + 2}};
    std::vector<Voxel> out(27);
    REQUIRE(world->readBox(box, out).ok());
    CHECK(out == vtp::test::voxelsOneByOne(*world, box));
    CHECK(out[1 + 3 * (1 + 3 * 1)] == Voxel{2, 255});
  }

  SUBCASE("listeners receive one event per changed chunk with its version and changed box") {
    std::vector<ChangeEvent> seen;
    Subscription sub = world->subscribe([&](std::span<const ChangeEvent> events) {
      seen.insert(seen.end(), events.begin(), events.end());
    });
    REQUIRE(world->fillBox({{6, 0, 0}, {10, 2, 1}}, 2).ok());
    REQUIRE(seen.size() == 2);
    CHECK(seen[0].chunk == ChunkCoord{0, 0, 0});
    CHECK(seen[0].changed == VoxelBox{{6, 0, 0}, {8, 2, 1}});
    CHECK(seen[0].version == 1);
    CHECK(seen[1].chunk == ChunkCoord{1, 0, 0});
    CHECK(seen[1].changed == VoxelBox{{8, 0, 0}, {10, 2, 1}});
    sub.reset();
    REQUIRE(world->fillBox({{0, 5, 0}, {1, 6, 1}}, 2).ok());
    CHECK(seen.size() == 2);  // unsubscribed: no more calls
  }

  SUBCASE("a listener may read, snapshot and save the world it listens to") {
    std::size_t seen_chunks = 0;
    Subscription sub = world->subscribe([&](std::span<const ChangeEvent> events) {
      seen_chunks = world->snapshot().chunks().size();
      CHECK(world->voxel(events[0].changed.min) == Voxel{2, 255});
    });
    REQUIRE(world->fillBox({{0, 0, 0}, {9, 1, 1}}, 2).ok());
    CHECK(seen_chunks == 2);
  }

  SUBCASE("a subscription may outlive its world") {
    Subscription sub = world->subscribe([](std::span<const ChangeEvent>) {});
    world.reset();
    sub.reset();
    CHECK(true);  // reaching here without a use-after-free (ASan) is the assertion
  }

  SUBCASE("a batch applies all its edits, later ones seeing earlier ones") {
    std::vector<EditCommand> batch;
    batch.push_back(ShapeEdit{BoxShape{{0, 0, 0}, {4, 4, 4}}, EditOp::kFill, 2});
    batch.push_back(ShapeEdit{BoxShape{{1, 1, 1}, {3, 3, 3}}, EditOp::kClear, 0});
    batch.push_back(ReplaceEdit{{{0, 0, 0}, {1, 4, 4}}, 2, 6});
    auto r = world->apply(batch);
    REQUIRE(r.ok());
    CHECK(world->voxel({2, 2, 2}) == kAir);
    CHECK(world->voxel({0, 2, 2}) == Voxel{6, 255});
    CHECK(world->voxel({3, 3, 3}) == Voxel{2, 255});
  }
}

TEST_CASE("World: bad edits are refused and change nothing") {
  auto world = vtp::test::makeWorld();
  std::mt19937_64 rng(3);
  vtp::test::randomEdits(*world, {{-20, -20, -20}, {20, 20, 20}}, 40, rng);
  const std::uint64_t before = vtp::test::contentHash(*world);
  int listener_calls = 0;
  Subscription sub = world->subscribe([&](std::span<const ChangeEvent>) { ++listener_calls; });

  auto rejects = [&](const EditCommand& edit, ErrorCode code) {
    auto r = world->apply(edit);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == code);
    CHECK_FALSE(r.error().message.empty());
    CHECK(r.error().message.find('\n') == std::string::npos);
  };
  const Vec3d origin{0, 0, 0};
  SUBCASE("non-finite numbers") {
    rejects(ShapeEdit{SphereShape{{kNaN, 0, 0}, 3}, EditOp::kFill, 2}, ErrorCode::kInvalidArgument);
    rejects(ShapeEdit{SphereShape{origin, kInf}, EditOp::kFill, 2}, ErrorCode::kInvalidArgument);
    rejects(ShapeEdit{SphereShape{origin, kNaN}, EditOp::kClear, 0}, ErrorCode::kInvalidArgument);
    rejects(ShapeEdit{BoxShape{{0, 0, 0}, {kInf, 1, 1}}, EditOp::kFill, 2}, ErrorCode::kInvalidArgument);
    rejects(ShapeEdit{CylinderShape{origin, 2, kNaN}, EditOp::kFill, 2}, ErrorCode::kInvalidArgument);
    rejects(ShapeEdit{CylinderShape{{0, -kInf, 0}, 2, 3}, EditOp::kFill, 2}, ErrorCode::kInvalidArgument);
  }
  SUBCASE("radius at or below zero, or over the cap") {
    rejects(ShapeEdit{SphereShape{origin, 0}, EditOp::kFill, 2}, ErrorCode::kInvalidArgument);
    rejects(ShapeEdit{SphereShape{origin, -1}, EditOp::kFill, 2}, ErrorCode::kInvalidArgument);
    rejects(ShapeEdit{SphereShape{origin, 64.5}, EditOp::kFill, 2}, ErrorCode::kLimitExceeded);
    rejects(ShapeEdit{SphereShape{origin, 1e30}, EditOp::kFill, 2}, ErrorCode::kLimitExceeded);
    rejects(ShapeEdit{CylinderShape{origin, 65, 2}, EditOp::kFill, 2}, ErrorCode::kLimitExceeded);
    rejects(ShapeEdit{CylinderShape{origin, 2, 0}, EditOp::kFill, 2}, ErrorCode::kInvalidArgument);
  }
  SUBCASE("volume over the cap") {
    rejects(ShapeEdit{BoxShape{{0, 0, 0}, {1024, 1024, 8}}, EditOp::kFill, 2}, ErrorCode::kLimitExceeded);
    rejects(ShapeEdit{CylinderShape{origin, 60, 1e6}, EditOp::kFill, 2}, ErrorCode::kLimitExceeded);
    rejects(ReplaceEdit{{{-2000, -2000, -2000}, {2000, 2000, 2000}}, 2, 3}, ErrorCode::kLimitExceeded);
    std::vector<EditCommand> batch(5, ShapeEdit{BoxShape{{0, 0, 0}, {256, 256, 64}}, EditOp::kFill, 2});
    auto r = world->apply(batch);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::kLimitExceeded);
  }
  SUBCASE("chunks over the cap: a thin box within the voxel cap, alone or in a batch") {
    rejects(ShapeEdit{BoxShape{{0, 0, 0}, {1, 1, 1 << 20}}, EditOp::kFill, 2}, ErrorCode::kLimitExceeded);
    rejects(ReplaceEdit{{{-65536, 0, 0}, {65536, 1, 16}}, 2, 3}, ErrorCode::kLimitExceeded);  // 16384 x 1 x 2 chunks
    std::vector<EditCommand> batch;
    for (double x = 0; x < 40; x += 8) {
      batch.push_back(ShapeEdit{BoxShape{{x, 0, 0}, {x + 1, 1, 8 << 14}}, EditOp::kFill, 2});
    }
    auto r = world->apply(batch);  // each edit at the chunk cap, the batch over its own
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::kLimitExceeded);
    CHECK(r.error().message.find("chunks") != std::string::npos);
  }
  SUBCASE("coordinates outside storage") {
    rejects(ShapeEdit{SphereShape{{double(kStorageLimit), 0, 0}, 2}, EditOp::kFill, 2}, ErrorCode::kOutOfRange);
    rejects(ShapeEdit{SphereShape{{0, -1e300, 0}, 2}, EditOp::kFill, 2}, ErrorCode::kOutOfRange);
    rejects(SetVoxelEdit{{kStorageLimit, 0, 0}, {2, 255}}, ErrorCode::kOutOfRange);
    rejects(SetVoxelEdit{{0, std::numeric_limits<std::int32_t>::min(), 0}, {2, 255}}, ErrorCode::kOutOfRange);
    rejects(ReplaceEdit{{{kStorageLimit - 1, 0, 0}, {kStorageLimit + 1, 1, 1}}, 2, 3}, ErrorCode::kOutOfRange);
  }
  SUBCASE("unknown or unusable materials") {
    rejects(ShapeEdit{SphereShape{origin, 2}, EditOp::kFill, 77}, ErrorCode::kUnknownMaterial);
    rejects(ShapeEdit{SphereShape{origin, 2}, EditOp::kPaint, 200}, ErrorCode::kUnknownMaterial);
    rejects(ShapeEdit{SphereShape{origin, 2}, EditOp::kFill, kAirMaterial}, ErrorCode::kInvalidArgument);
    rejects(ShapeEdit{SphereShape{origin, 2}, EditOp::kPaint, kWaterMaterial}, ErrorCode::kInvalidArgument);
    rejects(SetVoxelEdit{{0, 0, 0}, {99, 255}}, ErrorCode::kUnknownMaterial);
    rejects(ReplaceEdit{{{0, 0, 0}, {1, 1, 1}}, kAirMaterial, 2}, ErrorCode::kInvalidArgument);
    rejects(ReplaceEdit{{{0, 0, 0}, {1, 1, 1}}, 2, kWaterMaterial}, ErrorCode::kInvalidArgument);
    rejects(ReplaceEdit{{{0, 0, 0}, {1, 1, 1}}, kWaterMaterial, 3}, ErrorCode::kInvalidArgument);
    rejects(WriteRegionEdit{{{0, 0, 0}, {2, 1, 1}}, {Voxel{2, 255}, Voxel{42, 255}}}, ErrorCode::kUnknownMaterial);
  }
  SUBCASE("an operation that is not fill, clear or paint") {
    rejects(ShapeEdit{SphereShape{origin, 2}, EditOp(7), 2}, ErrorCode::kInvalidArgument);
  }
  SUBCASE("malformed boxes and regions") {
    rejects(ShapeEdit{BoxShape{{0, 0, 0}, {0, 4, 4}}, EditOp::kFill, 2}, ErrorCode::kInvalidArgument);
    rejects(ReplaceEdit{{{3, 0, 0}, {1, 1, 1}}, 2, 3}, ErrorCode::kInvalidArgument);
    rejects(WriteRegionEdit{{{0, 0, 0}, {2, 2, 2}}, std::vector<Voxel>(7)}, ErrorCode::kInvalidArgument);
  }
  SUBCASE("a batch with one bad edit applies none of them") {
    std::vector<EditCommand> batch;
    batch.push_back(ShapeEdit{SphereShape{{1, 1, 1}, 5}, EditOp::kFill, 2});
    batch.push_back(ShapeEdit{SphereShape{{kNaN, 1, 1}, 5}, EditOp::kFill, 2});
    auto r = world->apply(batch);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.rfind("edit 1:", 0) == 0);
  }
  CHECK(vtp::test::contentHash(*world) == before);
  CHECK(listener_calls == 0);
}

TEST_CASE("World: bad configs are refused and the configured edit caps hold") {
  SUBCASE("rejects bad configs") {
    WorldConfig c;
    c.voxel_size = 0;
    CHECK_FALSE(World::create(c).ok());
    c.voxel_size = kNaN;
    CHECK_FALSE(World::create(c).ok());
    c = WorldConfig{};
    c.limits.max_radius = -1;
    CHECK_FALSE(World::create(c).ok());
    c = WorldConfig{};
    c.limits.max_batch_voxels = 10;
    CHECK(World::create(c).error().code == ErrorCode::kInvalidArgument);
    c = WorldConfig{};
    c.limits.max_edit_chunks = 0;
    CHECK(World::create(c).error().code == ErrorCode::kInvalidArgument);
    c = WorldConfig{};
    c.limits.max_batch_chunks = c.limits.max_edit_chunks - 1;
    CHECK(World::create(c).error().code == ErrorCode::kInvalidArgument);
  }
  SUBCASE("an edit at the chunk cap applies; one chunk more does not") {
    WorldConfig c;
    c.limits.max_edit_chunks = 4;
    auto world = vtp::test::makeWorld(c);
    CHECK(world->fillBox({{-8, 0, 0}, {8, 16, 1}}, 2).ok());
    CHECK(world->fillBox({{-8, 0, 0}, {9, 16, 1}}, 2).error().code == ErrorCode::kLimitExceeded);
  }
  SUBCASE("a batch's chunk cap counts each chunk once: many edits in few chunks apply") {
    auto world = vtp::test::makeWorld();
    std::vector<EditCommand> batch;
    for (int i = 0; i < 70000; ++i) batch.push_back(SetVoxelEdit{{i % 8, (i / 8) % 8, (i / 64) % 8}, {2, 200}});
    REQUIRE(world->apply(batch).ok());  // 70,000 edits over the batch chunk cap's 65,536, all in one chunk
    CHECK(world->stats().stored_chunks == 1);
    std::vector<EditCommand> same_chunks(8, ShapeEdit{BoxShape{{0, 0, 0}, {1, 1, 8 << 14}}, EditOp::kFill, 2});
    CHECK(world->apply(same_chunks).ok());  // 8 x 16,384 overlaps of the same 16,384 chunks
  }
  SUBCASE("reads are not capped by the edit limits: a world of small edits reads a chunk's 12^3 box") {
    WorldConfig c;
    c.limits.max_edit_voxels = 64;
    c.limits.max_batch_voxels = 64;
    auto world = vtp::test::makeWorld(c);
    REQUIRE(world->fillBox({{0, 0, 0}, {4, 4, 4}}, 2).ok());
    CHECK(world->fillBox({{0, 0, 0}, {5, 4, 4}}, 2).error().code == ErrorCode::kLimitExceeded);
    std::vector<Voxel> box(12 * 12 * 12);
    REQUIRE(world->readBox(grown(chunkBox({0, 0, 0}), 2), box).ok());
    CHECK(box[std::size_t(2 + 12 * (2 + 12 * 2))] == Voxel{2, 255});
    std::vector<Voxel> none;
    CHECK(world->readBox({{0, 0, 0}, {257, 256, 256}}, none).error().code == ErrorCode::kLimitExceeded);
    CHECK(world->readBox({{0, 0, 0}, {1, 1, 1 << 20}}, none).error().code == ErrorCode::kLimitExceeded);  // 2^17 chunks
  }
  SUBCASE("honours configured caps") {
    WorldConfig c;
    c.limits.max_radius = 4;
    auto world = vtp::test::makeWorld(c);
    CHECK(world->fillSphere({0, 0, 0}, 4, 2).ok());
    CHECK(world->fillSphere({0, 0, 0}, 4.01, 2).error().code == ErrorCode::kLimitExceeded);
  }
}

TEST_CASE("World: edits that run out of memory say so and change nothing") {
  // Every allocation of a batch made to fail in turn (the k-th after the call starts), as a process memory limit
  // would: each failing call returns kOutOfMemory and leaves the world as it was; the first k past the batch's
  // allocations applies it whole.
  using namespace vtp::test::alloc_probe;
  auto world = vtp::test::makeWorld();
  std::mt19937_64 rng(17);
  vtp::test::randomEdits(*world, {{-20, -20, -20}, {20, 20, 20}}, 30, rng);
  const std::vector<std::uint8_t> before = encodeWorld(*world);
  std::vector<Voxel> region(std::size_t(6 * 5 * 9), Voxel{3, 200});
  const std::vector<EditCommand> batch{
      ShapeEdit{BoxShape{{-13.5, -4, -9}, {11, 3.25, 17}}, EditOp::kFill, 2},
      ShapeEdit{SphereShape{{2.5, -1, 0.5}, 6.5}, EditOp::kClear, 0},
      ShapeEdit{SphereShape{{-7, 5, 8}, 4}, EditOp::kFill, kWaterMaterial},
      ReplaceEdit{{{-16, -16, -16}, {16, 0, 16}}, 2, 4},
      WriteRegionEdit{{{-3, -3, -3}, {3, 2, 6}}, region},
  };
  int failed = 0;
  for (std::int64_t k = 1;; ++k) {
    g_fail_countdown = k;
    vtp::Result<EditResult> r = world->apply(batch);
    g_fail_countdown = 0;
    if (r.ok()) break;
    ++failed;
    REQUIRE(r.error().code == ErrorCode::kOutOfMemory);
    REQUIRE(encodeWorld(*world) == before);
    REQUIRE(k < 100000);
  }
  MESSAGE("allocations of the batch, each failed once: " << failed);
  CHECK(failed >= 20);
  auto applied = decodeWorld(before).value().world;
  REQUIRE(applied->apply(batch).ok());
  CHECK(encodeWorld(*world) == encodeWorld(*applied));
}
