// The world rays' chunk walk (physics/src/query/chunk_walk.h, white-box) against a brute-force slab test in long double
// over every chunk near the segment: each chunk whose grown bounds the segment enters is visited once, in order of
// entry, and no other. Rays: random ones with negative coordinates, axis-aligned ones, ones on chunk boundaries or one
// voxel off them (exactly on a grown bound), ones starting on a boundary behind the origin by rounding (a reviewer's
// reproducer), long ones, zero-length ones, and directions from 1e-300 to 1e300 with subnormal and flushed components.
#include "query/chunk_walk.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "vtp/physics/collider.h"

using namespace vtp::terrain;
using namespace vtp::physics;

namespace {

using Real = long double;

// The segment's entry into chunk c's bounds grown by `grow` voxels plus `margin` (negative: shrunk), or -1 when it
// misses them: the slab test with exact-enough arithmetic (long double, no reciprocal).
Real referenceEntry(const Ray& ray, ChunkCoord c, double voxel_size, Real margin) {
  const Real size = Real(kChunkSize) * voxel_size;
  const std::array<int, 3> k{c.x, c.y, c.z};
  Real t0 = 0, t1 = ray.max_t;
  for (std::size_t a = 0; a < 3; ++a) {
    const Real lo = k[a] * size - voxel_size - margin, hi = (k[a] + 1) * size + voxel_size + margin;
    const Real o = ray.origin[a], d = ray.direction[a];
    if (d == 0) {
      if (o < lo || o > hi) return -1;
      continue;
    }
    const Real ta = (lo - o) / d, tb = (hi - o) / d;
    t0 = std::max(t0, std::min(ta, tb));
    t1 = std::min(t1, std::max(ta, tb));
  }
  return t0 <= t1 ? t0 : -1;
}

struct Visit {
  ChunkCoord chunk;
  double entry;
};

std::vector<Visit> walk(const Ray& ray, double voxel_size, std::size_t stop_after = SIZE_MAX) {
  std::vector<Visit> out;
  walkChunks(ray, voxel_size, [&](ChunkCoord c, double entry) {
    out.push_back({c, entry});
    return out.size() < stop_after;
  });
  return out;
}

// Compares the walk on `ray` with the reference; returns the number of disagreements (and reports the first few).
int check(const Ray& ray, double voxel_size) {
  const std::vector<Visit> visits = walk(ray, voxel_size);
  int bad = 0;
  auto fail = [&](const std::string& what, ChunkCoord c) {
    if (++bad <= 3) {
      MESSAGE(what << " chunk (" << c.x << ", " << c.y << ", " << c.z << ") ray origin (" << ray.origin[0] << ", "
                   << ray.origin[1] << ", " << ray.origin[2] << ") direction (" << ray.direction[0] << ", "
                   << ray.direction[1] << ", " << ray.direction[2] << ") max_t " << ray.max_t);
    }
  };
  // Once each, in order of entry.
  std::map<ChunkCoord, double> visited;
  for (std::size_t i = 0; i < visits.size(); ++i) {
    if (!visited.emplace(visits[i].chunk, visits[i].entry).second) fail("visited twice:", visits[i].chunk);
    if (i > 0 && visits[i].entry < visits[i - 1].entry) fail("out of order:", visits[i].chunk);
  }
  // Rounding in the walk's double arithmetic moves a bound by far less than eps: a chunk the segment enters with
  // the bounds shrunk by eps must be visited, one it misses with them grown by eps must not be, and a visited chunk's
  // entry lies between those of the grown and the shrunk bounds (a grazing one's only above the grown one's).
  const Real size = Real(kChunkSize) * voxel_size, eps = 1e-9L * size, slack = 1e-12L * ray.max_t;
  std::array<std::int64_t, 3> lo{}, hi{};
  for (std::size_t a = 0; a < 3; ++a) {
    const Real e = Real(ray.origin[a]) + Real(ray.max_t) * Real(ray.direction[a]);
    lo[a] = std::int64_t(std::floor((std::min<Real>(ray.origin[a], e) - voxel_size) / size)) - 1;
    hi[a] = std::int64_t(std::floor((std::max<Real>(ray.origin[a], e) + voxel_size) / size)) + 1;
  }
  std::size_t entered = 0;
  for (std::int64_t z = lo[2]; z <= hi[2]; ++z)
    for (std::int64_t y = lo[1]; y <= hi[1]; ++y)
      for (std::int64_t x = lo[0]; x <= hi[0]; ++x) {
        const ChunkCoord c{std::int32_t(x), std::int32_t(y), std::int32_t(z)};
        const Real loose = referenceEntry(ray, c, voxel_size, eps), tight = referenceEntry(ray, c, voxel_size, -eps);
        const auto it = visited.find(c);
        if (it == visited.end()) {
          if (tight >= 0) fail("missed:", c);
          continue;
        }
        ++entered;
        const Real entry = it->second;
        if (loose < 0) fail("never entered:", c);
        else if (entry < loose - slack || (tight >= 0 && entry > tight + slack)) fail("wrong entry:", c);
      }
  if (entered != visited.size()) fail("visited far away:", visits.front().chunk);
  return bad;
}

Ray randomRay(std::mt19937_64& rng, double voxel_size, int kind) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> offset(-1, 1);  // voxels off a chunk boundary
  const double size = kChunkSize * voxel_size;
  Ray ray;
  for (std::size_t a = 0; a < 3; ++a) ray.origin[a] = u(rng) * 40 * size;
  for (std::size_t a = 0; a < 3; ++a) ray.direction[a] = u(rng);
  ray.max_t = (0.5 + 0.5 * u(rng)) * 12 * size;
  switch (kind) {
    case 1: {  // axis-aligned, possibly along a chunk boundary or a grown bound
      const std::size_t axis = rng() % 3;
      for (std::size_t a = 0; a < 3; ++a) {
        ray.direction[a] = a == axis ? (rng() % 2 ? 1.0 : -1.0) : 0.0;
        if (a != axis && rng() % 2) ray.origin[a] = std::round(ray.origin[a] / size) * size + offset(rng) * voxel_size;
      }
      break;
    }
    case 2:  // in a plane one voxel off a chunk boundary, or on one, and starting on a boundary
      for (std::size_t a = 0; a < 3; ++a) {
        if (rng() % 2) ray.origin[a] = std::round(ray.origin[a] / size) * size + offset(rng) * voxel_size;
      }
      ray.direction[rng() % 3] = 0;
      break;
    case 3:  // long, across many chunks (the brute force visits the cube of them: kept to about 36 a side)
      ray.max_t *= 3;
      break;
    case 4:  // a tiny or huge direction scale, with a component possibly subnormal or flushed by prepareRay
    {
      const double scale = std::pow(10.0, double(int(rng() % 601) - 300));
      for (std::size_t a = 0; a < 3; ++a) ray.direction[a] *= scale;
      ray.max_t /= scale;
      const std::size_t a = rng() % 3;
      const double tiny[] = {5e-324, 1e-320, 2.2e-308, 1e-31 * scale, 1e-29 * scale, 0.0};
      ray.direction[a] = std::copysign(tiny[rng() % 6], ray.direction[a]);
      if (!std::isfinite(ray.max_t) || ray.max_t == 0) ray.max_t = 1;
      break;
    }
    case 5:  // zero length
      ray.max_t = 0;
      break;
    default:
      break;
  }
  return ray;
}

}  // namespace

TEST_CASE("Chunk walk: every chunk whose grown bounds the segment enters, once, in order of entry") {
  std::mt19937_64 rng(0x5eed'c4a1);
  for (const double voxel_size : {1.0, 0.25, 1.2600950723670614}) {
    int bad = 0;
    std::array<int, 6> rays{};  // of each kind
    for (int i = 0; i < 6000; ++i) {
      const Ray ray = randomRay(rng, voxel_size, i % 6);
      auto prepared = prepareRay(ray, ChunkCoord{0, 0, 0}, voxel_size);
      if (!prepared.ok()) continue;  // the walk's contract: a ray prepareRay accepts
      ++rays[std::size_t(i % 6)];
      bad += check(ray, voxel_size);
    }
    INFO("voxel size " << voxel_size);
    for (const int n : rays) CHECK(n > 900);
    CHECK(bad == 0);
  }
}

TEST_CASE("Chunk walk: a ray whose first boundary rounds behind its origin visits each chunk once") {
  // Found in review: floor(origin / size) put the first boundary a hair behind the origin on two axes, and 20 chunks
  // were visited 24 times.
  Ray ray;
  ray.origin = {13024.342667985946, -8054.5277025702571, 79.38598955911479};
  ray.direction = {-1e-7, -2e-7, 1};
  ray.max_t = 37.802852171011843;
  const double voxel_size = 1.2600950723670614;
  CHECK(check(ray, voxel_size) == 0);
  CHECK(walk(ray, voxel_size).size() == 20);
}

TEST_CASE("Chunk walk: a subnormal direction component counts as zero, as prepareRay flushes it") {
  // Along x, on the grown bounds of the chunks at y = -1 and 0 (z = -1 and 0 hold z = 0.5): 16 chunks. Unflushed, the
  // y reciprocal overflows and the slab test of the y = 0 row gives NaN, dropping half of them.
  Ray ray;
  ray.origin = {-1, -1, 0.5};
  ray.direction = {1, 1e-320, 0};
  ray.max_t = 20;
  CHECK(check(ray, 1.0) == 0);
  std::map<std::array<int, 3>, double> want;
  for (int x = -1; x <= 2; ++x)
    for (int y = -1; y <= 0; ++y)
      for (int z = -1; z <= 0; ++z) want[{x, y, z}] = std::max(0.0, 8.0 * x - 1 - ray.origin[0]);
  std::map<std::array<int, 3>, double> got;
  for (const Visit& v : walk(ray, 1.0)) got[{v.chunk.x, v.chunk.y, v.chunk.z}] = v.entry;
  CHECK(got == want);
}

TEST_CASE("Chunk walk: stops when the visitor says so") {
  Ray ray;
  ray.origin = {-3.5, 2.25, -100.75};
  ray.direction = {0.3, -0.2, 1};
  ray.max_t = 200;
  const std::vector<Visit> all = walk(ray, 1.0);
  REQUIRE(all.size() > 10);
  for (const std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(7), all.size()}) {
    const std::vector<Visit> some = walk(ray, 1.0, n);
    REQUIRE(some.size() == n);
    for (std::size_t i = 0; i < n; ++i) CHECK(some[i].chunk == all[i].chunk);
  }
}
