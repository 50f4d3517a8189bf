// The water walk's level-pool shortcut (physics/src/water/water_voxels.h, white-box): findLevelPool against the
// definition written out column by column, and wetMoments with a pool against the voxel walk alone, on random pools
// (beds of uneven height, columns without water, partly filled tops, rock and air above), pools broken by one voxel,
// and segments at random, vertical, level on the surface or a floor, and along column boundaries.
#include "water/water_voxels.h"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

using namespace vtp::terrain;
using namespace vtp::physics::water;

namespace {

constexpr Voxel kAirVoxel{};
constexpr Voxel kRockVoxel{2, 200};

// The definition, column by column: dry voxels, full water, at most one partly filled voxel, dry voxels; every column
// with water ending at the same surface; some water somewhere.
bool isLevelPool(const VoxelBlock& b, double& surface) {
  bool any = false;
  for (int z = 0; z < b.size[2]; ++z)
    for (int x = 0; x < b.size[0]; ++x) {
      int phase = 0;  // 0 dry below, 1 full water, 2 above the surface
      double top = -1;
      for (int y = 0; y < b.size[1]; ++y) {
        const double f = fillOf(b.voxels[std::size_t(x + b.size[0] * (y + b.size[1] * z))]);
        if (phase == 0 && f > 0) phase = 1;
        if (phase == 1) {
          if (f == 1) continue;
          top = y + f;  // a partly filled voxel (f > 0) or the first dry one (f = 0)
          phase = 2;
          continue;
        }
        if (phase == 2 && f > 0) return false;
      }
      if (phase == 1) top = b.size[1];
      if (top < 0) continue;  // no water in this column
      if (any && top != surface) return false;
      surface = top;
      any = true;
    }
  return any;
}

struct RandomBlock {
  VoxelBlock block;
  std::vector<Voxel> voxels;
};

// A level pool: surface at `level` voxels (k + o / 255), each column's bed at a random height below it (or no water
// at all), rock or air around; then, now and then, one voxel changed at random (usually no longer a pool).
RandomBlock randomPool(std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  RandomBlock r;
  const std::array<int, 3> size{pick(1, 7), pick(1, 9), pick(1, 7)};
  r.block.origin = {pick(-20, 20), pick(-20, 20), pick(-20, 20)};
  r.block.size = size;
  r.voxels.assign(std::size_t(size[0] * size[1] * size[2]), kAirVoxel);
  const int k = pick(0, size[1] - 1);
  const std::uint8_t top = std::uint8_t(pick(0, 3) == 0 ? 255 : pick(1, 255));
  const bool level_bed = pick(0, 2) == 0;
  const int shared_bed = pick(0, k);
  for (int z = 0; z < size[2]; ++z)
    for (int x = 0; x < size[0]; ++x) {
      const bool dry = pick(0, 9) == 0;
      const int bed = level_bed ? shared_bed : pick(0, k);
      for (int y = 0; y < size[1]; ++y) {
        Voxel v = pick(0, 1) == 0 ? kAirVoxel : kRockVoxel;
        if (!dry && y >= bed && y < k) v = {kWaterMaterial, 255};
        if (!dry && y == k) v = {kWaterMaterial, top};
        r.voxels[std::size_t(x + size[0] * (y + size[1] * z))] = v;
      }
    }
  if (pick(0, 3) == 0) {
    const Voxel choices[] = {kAirVoxel, kRockVoxel, {kWaterMaterial, 255}, {kWaterMaterial, std::uint8_t(pick(1, 254))}};
    r.voxels[std::size_t(pick(0, int(r.voxels.size()) - 1))] = choices[pick(0, 3)];
  }
  r.block.voxels = r.voxels.data();
  return r;
}

}  // namespace

TEST_CASE("Level pools: found exactly when the block's water is one, and their chords' wet parts equal the walk's") {
  std::mt19937_64 rng(0x900d'b00c);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  int pools = 0, not_pools = 0, segments = 0, wet = 0, shortcut = 0, wrong_pool = 0, wrong_surface = 0,
      wrong_moments = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const RandomBlock r = randomPool(rng);
    const VoxelBlock& b = r.block;
    double surface = 0;
    const bool want = isLevelPool(b, surface);
    LevelPool pool;
    const bool found = findLevelPool(b, pool);
    wrong_pool += found != want ? 1 : 0;
    if (!found || !want) {
      not_pools += 1;
      continue;
    }
    ++pools;
    wrong_surface += pool.surface != surface ? 1 : 0;
    const double o[3] = {double(b.origin.x), double(b.origin.y), double(b.origin.z)};
    for (int i = 0; i < 60; ++i) {
      std::array<double, 3> a{}, d{};
      for (std::size_t axis = 0; axis < 3; ++axis) {
        a[axis] = o[axis] + uniform(-1, b.size[axis] + 1);
        d[axis] = uniform(-4, 4);
      }
      switch (i % 6) {
        case 1: d[0] = d[2] = 0; break;                                    // vertical
        case 2: a[1] = o[1] + surface, d[1] = 0; break;                    // level, on the surface
        case 3: a[1] = o[1] + std::floor(uniform(0, b.size[1])), d[1] = 0; break;  // level, on a voxel face
        case 4: a[0] = o[0] + std::floor(uniform(0, b.size[0] + 1)), d[0] = 0; break;  // in a column boundary
        case 5: d[1] = uniform(-0.01, 0.01); break;                        // nearly level
        default: break;
      }
      const VoxelSegment s(a, d);
      double t0 = 0, t1 = 1;
      if (!clipToBlock(s, b, t0, t1)) continue;
      ++segments;
      const WetMoments walked = wetMoments(s, b, t0, t1, nullptr);
      const WetMoments pooled = wetMoments(s, b, t0, t1, &pool);
      wet += walked.length > 0 ? 1 : 0;
      shortcut += pooled.walked ? 0 : 1;
      wrong_moments += walked.walked ? 0 : 1;  // without a pool, always the walk
      if (std::abs(walked.length - pooled.length) > 1e-12 || std::abs(walked.first - pooled.first) > 1e-12) {
        ++wrong_moments;
        if (wrong_moments <= 5) {
          MESSAGE("segment a " << a[0] << ", " << a[1] << ", " << a[2] << " d " << d[0] << ", " << d[1] << ", "
                               << d[2] << ": walk " << walked.length << ", " << walked.first << "; pool "
                               << pooled.length << ", " << pooled.first);
        }
      }
    }
  }
  CHECK(wrong_pool == 0);
  CHECK(wrong_surface == 0);
  CHECK(wrong_moments == 0);
  CHECK(pools > 1000);
  CHECK(not_pools > 300);
  CHECK(segments > 30000);
  CHECK(wet > 10000);
  CHECK(shortcut > segments / 3);  // the pool answers most steep segments by itself
}

TEST_CASE("Level pools: one column, voxel by voxel") {
  const Voxel full{kWaterMaterial, 255}, part{kWaterMaterial, 51}, part2{kWaterMaterial, 102};
  auto pool = [](std::vector<Voxel> column, LevelPool& out) {
    const VoxelBlock b{{-3, -7, 5}, {1, int(column.size()), 1}, column.data()};
    return findLevelPool(b, out);
  };
  LevelPool p;
  CHECK(pool({kRockVoxel, kAirVoxel, full, full, part, kAirVoxel}, p));
  CHECK(p.surface == 4 + 51 / 255.0);
  CHECK(p.floors == std::vector<std::int32_t>{2});
  CHECK(pool({full, full}, p));
  CHECK(p.surface == 2);
  CHECK(pool({kRockVoxel, part, kRockVoxel}, p));
  CHECK(p.surface == 1 + 51 / 255.0);
  CHECK(!pool({full, part, part2, kAirVoxel}, p));  // two partly filled voxels stacked
  CHECK(!pool({full, kAirVoxel, full}, p));         // water above a dry voxel
  CHECK(!pool({part, full}, p));               // full water over a partly filled voxel
  CHECK(!pool({kRockVoxel, kAirVoxel}, p));              // no water
}

TEST_CASE("Parallel segments: wetMomentsParallel, bit for bit what clipToBlock and wetMoments give each") {
  std::mt19937_64 rng(0x5eed'c0de);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int segments = 0, wet = 0, pooled_runs = 0, wrong = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const RandomBlock r = randomPool(rng);
    const VoxelBlock& b = r.block;
    LevelPool pool;
    const bool found = findLevelPool(b, pool);
    const LevelPool* level = found && pick(0, 4) != 0 ? &pool : nullptr;
    // One direction for the run: any, vertical, along a face (a zero x or z), falling, or nearly level (walked).
    std::array<double, 3> d{uniform(-2, 2), uniform(-2, 2), uniform(-2, 2)};
    switch (trial % 6) {
      case 1: d[0] = d[2] = 0; break;
      case 2: d[pick(0, 1) * 2] = 0; break;
      case 3: d[1] = -std::abs(d[1]) - 0.5; break;
      case 4: d[1] = uniform(-1e-4, 1e-4); break;
      default: break;
    }
    ParallelSegments s;
    s.direction = VoxelSegment({}, d);
    pooled_runs += level != nullptr && s.direction.d[1] != 0 ? 1 : 0;
    // Starts inside, around and on the faces of the block, on the surface, on a floor; lengths up to a few voxels.
    const std::size_t n = std::size_t(pick(0, 13));
    std::vector<double> x(n), y(n), z(n), length(n);
    const double o[3] = {double(b.origin.x), double(b.origin.y), double(b.origin.z)};
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = o[0] + uniform(-1.5, b.size[0] + 1.5);
      y[i] = o[1] + uniform(-1.5, b.size[1] + 1.5);
      z[i] = o[2] + uniform(-1.5, b.size[2] + 1.5);
      switch (pick(0, 5)) {
        case 1: x[i] = o[0] + pick(0, b.size[0]); break;
        case 2: z[i] = o[2] + pick(0, b.size[2]); break;
        case 3: if (found) y[i] = o[1] + pool.surface; break;
        case 4: y[i] = o[1] + pick(0, b.size[1]); break;
        default: break;
      }
      length[i] = pick(0, 9) == 0 ? 0.0 : uniform(0, 4);
    }
    s.x = x.data(), s.y = y.data(), s.z = z.data(), s.length = length.data(), s.count = n;
    std::vector<double> got_length(n, -1), got_first(n, -1);
    wetMomentsParallel(s, b, level, got_length.data(), got_first.data());
    for (std::size_t i = 0; i < n; ++i) {
      VoxelSegment one = s.direction;
      one.a = {x[i], y[i], z[i]};
      double t0 = 0, t1 = length[i];
      WetMoments want;
      if (clipToBlock(one, b, t0, t1)) want = wetMoments(one, b, t0, t1, level);
      ++segments;
      wet += want.length > 0 ? 1 : 0;
      if (std::bit_cast<std::uint64_t>(got_length[i]) != std::bit_cast<std::uint64_t>(want.length) ||
          std::bit_cast<std::uint64_t>(got_first[i]) != std::bit_cast<std::uint64_t>(want.first)) {
        if (++wrong <= 5) {
          MESSAGE("segment " << i << " of " << n << ": a " << x[i] << ", " << y[i] << ", " << z[i] << " d " << d[0]
                             << ", " << d[1] << ", " << d[2] << " length " << length[i] << ": got " << got_length[i]
                             << ", " << got_first[i] << "; want " << want.length << ", " << want.first);
        }
      }
    }
  }
  MESSAGE("segments " << segments << ", wet " << wet << ", runs with a pool " << pooled_runs);
  CHECK(wrong == 0);
  CHECK(segments > 20000);
  CHECK(wet > 3000);
  CHECK(pooled_runs > 1500);
}
