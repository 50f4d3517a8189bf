// White-box: the kernel's quad split (mesher/src/quad_split.h) against the scalar rule of surface_mesher.h, on random
// quads and on quads whose preferred split has a zero-area triangle — the fallback no voxel input has been seen to
// reach, so mesh() alone cannot test it.
#include <doctest/doctest.h>

#include <random>

#include "quad_split.h"

using vtp::mesher::Vertex;

namespace {

bool zeroArea(Vertex a, Vertex b, Vertex c) {
  const long ux = b.x - a.x, uy = b.y - a.y, uz = b.z - a.z, vx = c.x - a.x, vy = c.y - a.y, vz = c.z - a.z;
  return uy * vz - uz * vy == 0 && uz * vx - ux * vz == 0 && ux * vy - uy * vx == 0;
}

long length2(Vertex a, Vertex b) {
  const long dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
  return dx * dx + dy * dy + dz * dz;
}

// The header's rule, written plainly.
unsigned scalarSplit(const Vertex* v) {
  unsigned split = length2(v[1], v[3]) < length2(v[0], v[2]) ? 1u : 0u;
  const bool zero = split == 0 ? zeroArea(v[0], v[1], v[2]) || zeroArea(v[0], v[2], v[3])
                               : zeroArea(v[1], v[2], v[3]) || zeroArea(v[1], v[3], v[0]);
  return zero ? split ^ 1u : split;
}

template <int kAxis>
void checkAxis(std::mt19937_64& rng, int& fallbacks) {
  auto coord = [&] { return std::int16_t(rng() % 601); };
  for (int t = 0; t < 30000; ++t) {
    Vertex v[4];
    for (Vertex& x : v) x = {coord(), coord(), coord(), 0};
    if (t % 3 == 0) {
      // Three consecutive vertices on a line in 3D (the middle one the midpoint of the others).
      const int i = int(rng() % 4), j = (i + 1) % 4, k = (i + 2) % 4;
      auto even = [](Vertex x) { return Vertex{std::int16_t(x.x & ~1), std::int16_t(x.y & ~1), std::int16_t(x.z & ~1), 0}; };
      v[i] = even(v[i]);
      v[k] = even(v[k]);
      v[j] = {std::int16_t((v[i].x + v[k].x) / 2), std::int16_t((v[i].y + v[k].y) / 2),
              std::int16_t((v[i].z + v[k].z) / 2), 0};
    } else if (t % 3 == 1) {
      // Flat along the edge axis only: zero projected area, nonzero 3D area (the cold path returns the first choice).
      v[1] = v[0];
      v[2] = v[0];
      (kAxis == 0 ? v[1].y : kAxis == 1 ? v[1].z : v[1].x) = std::int16_t(v[0].x % 300 + 7);
      (kAxis == 0 ? v[2].x : kAxis == 1 ? v[2].y : v[2].z) = std::int16_t(v[0].y % 300 + 11);
    }
    const unsigned want = scalarSplit(v);
    if (want != (length2(v[1], v[3]) < length2(v[0], v[2]) ? 1u : 0u)) ++fallbacks;
    // The kernel's tag lanes carry vertex indices; any values there must leave the answer alone.
    for (Vertex& x : v) x.pad = std::int16_t(rng());
    using vtp::mesher::cornerPair;
    REQUIRE(vtp::mesher::chooseSplit13<kAxis>(cornerPair(v[0], v[1]), cornerPair(v[2], v[3])) == want);
  }
}

}  // namespace

TEST_CASE("quad split: the kernel's split equals the scalar rule on every edge axis and in the zero-area fallback") {
  SUBCASE("the kernel's split equals the scalar rule, zero-area fallback included, for every edge axis") {
    std::mt19937_64 rng(808);
    int fallbacks = 0;
    checkAxis<0>(rng, fallbacks);
    checkAxis<1>(rng, fallbacks);
    checkAxis<2>(rng, fallbacks);
    CHECK(fallbacks > 10000);  // the degenerate quads really exercise the fallback
  }
}
