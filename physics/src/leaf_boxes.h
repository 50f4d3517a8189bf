#pragma once
// A collider's leaf boxes, 8 at a time, for its query kernels: a group's 8 int16 boxes are stored as structure of
// arrays (min x, y, z, then max x, y, z, 8 lanes each), so one compare per plane tests them all against a box given
// in broadcast int16 lanes. Exact on the grid.

#include <immintrin.h>

#include <cstdint>

#include "vtp/physics/collider.h"

namespace vtp::physics {

static_assert(kLeafGroup == 8, "a group's boxes are one SSE register of int16 lanes per plane");

// Bit i set when leaf box i of `group` overlaps the closed box lo..hi, for the first `valid` lanes (1..8). Lanes past
// the last leaf hold inverted boxes, which a box clamped to the int16 range can still "overlap" (and whose ray slabs
// look valid): they are masked by count. No branch.
inline unsigned overlappingLeaves(const std::int16_t* group, const __m128i (&lo)[3], const __m128i (&hi)[3],
                                  int valid) {
  __m128i miss = _mm_setzero_si128();
  for (int a = 0; a < 3; ++a) {
    const __m128i leaf_lo = _mm_load_si128(reinterpret_cast<const __m128i*>(group + kLeafGroup * a));
    const __m128i leaf_hi = _mm_load_si128(reinterpret_cast<const __m128i*>(group + kLeafGroup * (3 + a)));
    miss = _mm_or_si128(miss, _mm_or_si128(_mm_cmpgt_epi16(leaf_lo, hi[a]), _mm_cmpgt_epi16(lo[a], leaf_hi)));
  }
  return _pext_u32(~unsigned(_mm_movemask_epi8(miss)), 0x5555u) & ((1u << valid) - 1);  // one bit per 16-bit lane
}

}  // namespace vtp::physics
