#pragma once
// A collider's leaf boxes, 8 at a time, for its query kernels: a group's 8 int16 boxes are stored as structure of
// arrays (min x, y, z, then max x, y, z, 8 lanes each), so one compare per plane tests them all against a box given
// in broadcast int16 lanes. Exact on the grid.

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "vtp/physics/collider.h"

namespace vtp::physics {

static_assert(kLeafGroup == 8, "a group's boxes are one SSE register of int16 lanes per plane");

// Which leaves of a round of groups overlap the closed box lo..hi, given in broadcast int16 lanes: bit 8 i + j set
// when leaf box j of group i does, for the `count` groups (1..8) from `first_group` and the first `leaves` leaves of
// the round (lanes past a collider's last leaf hold inverted boxes, which a box clamped to the int16 range can still
// "overlap", and whose ray slabs look valid: they are cleared here). Two groups a step, packed into one movemask; a
// fixed number of steps, no branch on what they find. Exact on the grid.
inline std::uint64_t overlappingLeaves(const std::int16_t* first_group, int count, int leaves, const __m128i (&lo)[3],
                                       const __m128i (&hi)[3]) {
  auto miss = [&](int group) {
    const std::int16_t* g = first_group + 6 * kLeafGroup * group;
    __m128i m = _mm_setzero_si128();
    for (int a = 0; a < 3; ++a) {
      const __m128i leaf_lo = _mm_load_si128(reinterpret_cast<const __m128i*>(g + kLeafGroup * a));
      const __m128i leaf_hi = _mm_load_si128(reinterpret_cast<const __m128i*>(g + kLeafGroup * (3 + a)));
      m = _mm_or_si128(m, _mm_or_si128(_mm_cmpgt_epi16(leaf_lo, hi[a]), _mm_cmpgt_epi16(lo[a], leaf_hi)));
    }
    return m;
  };
  std::uint64_t bits = 0;
  for (int i = 0; i < count; i += 2) {
    // An odd count's last step tests its group twice; the copy's bits fall past `leaves`.
    const __m128i pair = _mm_packs_epi16(miss(i), miss(std::min(i + 1, count - 1)));
    bits |= std::uint64_t(~unsigned(_mm_movemask_epi8(pair)) & 0xFFFFu) << (kLeafGroup * i);
  }
  return _bzhi_u64(bits, unsigned(std::min(leaves, 8 * kLeafGroup)));
}

// Bit i set when byte i of `bits` (group i of a round, overlappingLeaves) is not zero.
inline unsigned groupsWithLeaves(std::uint64_t bits) {
  return ~unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_cvtsi64_si128(std::int64_t(bits)), _mm_setzero_si128()))) &
         0xFFu;
}

}  // namespace vtp::physics
