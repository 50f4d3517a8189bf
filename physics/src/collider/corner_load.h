#pragma once
// Eight triangles' corners at once, for the collider's SIMD kernels (rays and box gathers).

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "vtp/physics/collider.h"

namespace vtp::physics {

// Coordinates x, y, z of 8 vertices.
struct Corner {
  __m256i axis[3];
};

// Corner `corner` of triangles first .. first + 7: eight 8-byte vertex loads (x, y, z and two bytes of the next
// vertex), spread into int32 x, y, z by two shuffles. Lanes past the collider's last triangle read the next corner
// array's first entries, or for the last array its zero padding (vertex 0); callers mask the lanes past their range.
// No gathers: eight scalar loads and inserts are cheaper on this machine kind.
static_assert(kTriangleBlock == 8, "a block is one AVX2 register of int32 lanes");
template <bool kReorder>
[[gnu::always_inline]] inline Corner loadCornerWith(const std::int16_t* positions, const std::uint16_t* corner,
                                                    int first, __m256i order) {
  const std::uint16_t* offsets = corner + first;  // one address, so each lane's offset loads at a constant distance
  long long v[8];
  for (int lane = 0; lane < 8; ++lane) {
    std::memcpy(&v[lane], positions + (offsets[lane] & 0x7FFF), sizeof v[lane]);  // bit 15 is an edge flag
  }
  // Per 128-bit half, shuffle_ps takes 32-bit words 0 and 2 (x | y << 16) or 1 and 3 (z | next << 16) of each
  // source: vertices (0, 1) and (4, 5) in `lo`, (2, 3) and (6, 7) in `hi` come out in order 0..7.
  __m256i lo_words = _mm256_setr_epi64x(v[0], v[1], v[4], v[5]);
  __m256i hi_words = _mm256_setr_epi64x(v[2], v[3], v[6], v[7]);
  if constexpr (kReorder) {
    lo_words = _mm256_shuffle_epi8(lo_words, order);
    hi_words = _mm256_shuffle_epi8(hi_words, order);
  }
  const __m256 lo = _mm256_castsi256_ps(lo_words), hi = _mm256_castsi256_ps(hi_words);
  const __m256i xy = _mm256_castps_si256(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)));
  const __m256i zw = _mm256_castps_si256(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)));
  return {{_mm256_srai_epi32(_mm256_slli_epi32(xy, 16), 16), _mm256_srai_epi32(xy, 16),
           _mm256_srai_epi32(_mm256_slli_epi32(zw, 16), 16)}};
}
inline Corner loadCorner(const std::int16_t* positions, const std::uint16_t* corner, int first) {
  return loadCornerWith<false>(positions, corner, first, __m256i{});
}
// The same with each vertex's three coordinates first reordered by `order`, a byte shuffle of the 8 bytes of every
// vertex (the same in each 64-bit lane): axis[k] is then the coordinate `order` puts in word k.
inline Corner loadCorner(const std::int16_t* positions, const std::uint16_t* corner, int first, __m256i order) {
  return loadCornerWith<true>(positions, corner, first, order);
}

}  // namespace vtp::physics
