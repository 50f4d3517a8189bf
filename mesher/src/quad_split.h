#pragma once
// The quad split rule of surface_mesher.h ("Split"), in registers: the shorter diagonal by exact squared lengths, and
// the other diagonal when the chosen one would make a zero-area triangle. A triangle whose area projected along the
// quad's edge axis is nonzero has a nonzero area, which settles the common case; only a zero projection runs the
// exact 3D test (out of line). Private to the mesher; tests/mesher/quad_split_test.cpp checks it against the scalar
// rule directly, since no voxel input has been found that needs the fallback.

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "vtp/mesher/surface_mesher.h"

namespace vtp::mesher {

// Exact test for a zero-area triangle (all three cross-product components zero).
inline bool degenerate(Vertex a, Vertex b, Vertex c) {
  const int ux = b.x - a.x, uy = b.y - a.y, uz = b.z - a.z;
  const int vx = c.x - a.x, vy = c.y - a.y, vz = c.z - a.z;
  return uy * vz - uz * vy == 0 && uz * vx - ux * vz == 0 && ux * vy - uy * vx == 0;
}

// Two quad corners as one register: int16 lanes (x, y, z, tag) of the first, then of the second. The tag lanes
// (the mesher keeps vertex indices there) are ignored.
inline __m128i cornerPair(const Vertex& a, const Vertex& b) {
  std::int64_t pa, pb;
  std::memcpy(&pa, &a, sizeof pa);
  std::memcpy(&pb, &b, sizeof pb);
  return _mm_set_epi64x(pb, pa);
}

// The exact rule, for a quad where a projected area is zero: the shorter-diagonal choice `split13` unless that split
// has a zero-area triangle.
inline unsigned splitExact(__m128i v01, __m128i v23, unsigned split13) {
  Vertex v[4];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(v), v01);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(v + 2), v23);
  if (!split13) return degenerate(v[0], v[1], v[2]) || degenerate(v[0], v[2], v[3]);
  return !(degenerate(v[1], v[2], v[3]) || degenerate(v[1], v[3], v[0]));
}

// splitExact for both quads of a pair (see splitMasks13), as a mask per 128-bit half.
[[gnu::cold]] [[gnu::noinline]] inline __m256i splitExactPair(__m256i v01, __m256i v23, __m256i split) {
  const unsigned first = splitExact(_mm256_castsi256_si128(v01), _mm256_castsi256_si128(v23),
                                    unsigned(_mm256_extract_epi32(split, 0)) & 1u);
  const unsigned second = splitExact(_mm256_extracti128_si256(v01, 1), _mm256_extracti128_si256(v23, 1),
                                     unsigned(_mm256_extract_epi32(split, 4)) & 1u);
  return _mm256_setr_m128i(_mm_set1_epi32(-int(first)), _mm_set1_epi32(-int(second)));
}

// The splits of two quads v0 v1 v2 v3 around edges along kAxis, one per 128-bit half: v01 holds cornerPair(v0, v1)
// and v23 cornerPair(v2, v3) of the first quad in the low half, of the second in the high half. The result is a mask
// per half: all ones for (v1,v2,v3),(v1,v3,v0), all zeros for (v0,v1,v2),(v0,v2,v3). Every step is an in-lane
// operation, so two quads cost what one would. The reversed quad v0 v3 v2 v1 gets the same answer (same diagonals,
// same triangles as vertex sets), so it is asked in one orientation only.
template <int kAxis>
inline __m256i splitMasks13(__m256i v01, __m256i v23) {
  // Squared diagonals |v0 - v2|^2 and |v1 - v3|^2 in one pmaddwd (coordinates in a quad differ by < 2^11); the
  // tag lanes are masked off one factor.
  const __m256i diff = _mm256_sub_epi16(v01, v23);
  const __m256i xyz = _mm256_setr_epi16(-1, -1, -1, 0, -1, -1, -1, 0, -1, -1, -1, 0, -1, -1, -1, 0);
  const __m256i sq = _mm256_madd_epi16(diff, _mm256_and_si256(diff, xyz));  // (d02 xy, d02 z, d13 xy, d13 z)
  const __m256i len = _mm256_hadd_epi32(sq, sq);                            // (d02, d13, d02, d13)
  // Lane 0 (and 2): d02 > d13, so split 1 is the shorter diagonal; broadcast to the half.
  const __m256i longer02 = _mm256_cmpgt_epi32(len, _mm256_shuffle_epi32(len, _MM_SHUFFLE(2, 3, 0, 1)));
  const __m256i split = _mm256_shuffle_epi32(longer02, 0);
  // P = (b0,c0, b1,c1, b2,c2, b3,c3): the coordinates across the edge axis, vertex k in 32-bit lane k. Twice the
  // projected area of triangle (k, k+1, k+2) is the cross product of v[k+1] - v[k] and v[k+2] - v[k]: one pmaddwd
  // of D1 = (v[k+1] - v[k]) with X = (c[k+2] - c[k], b[k] - b[k+2]), X built from N = (-b, c) rotated by two
  // vertices, minus N, pairs swapped.
  constexpr char kB = 2 * ((kAxis + 1) % 3), kC = 2 * ((kAxis + 2) % 3);
  const __m256i pick = _mm256_setr_epi8(kB, kB + 1, kC, kC + 1, 8 + kB, 9 + kB, 8 + kC, 9 + kC, -1, -1, -1, -1, -1,
                                        -1, -1, -1, kB, kB + 1, kC, kC + 1, 8 + kB, 9 + kB, 8 + kC, 9 + kC, -1, -1, -1,
                                        -1, -1, -1, -1, -1);
  const __m256i p = _mm256_unpacklo_epi64(_mm256_shuffle_epi8(v01, pick), _mm256_shuffle_epi8(v23, pick));
  const __m256i n = _mm256_sign_epi16(p, _mm256_setr_epi16(-1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1));
  const __m256i d1 = _mm256_sub_epi16(_mm256_shuffle_epi32(p, _MM_SHUFFLE(0, 3, 2, 1)), p);
  const __m256i swap = _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,  //
                                        2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
  const __m256i x = _mm256_shuffle_epi8(_mm256_sub_epi16(_mm256_shuffle_epi32(n, _MM_SHUFFLE(1, 0, 3, 2)), n), swap);
  // Lanes (T012, T123, T230, T301) per half: split 0 makes T012 and T023 = T230 (lanes 0, 2), split 1 T123 and
  // T130 = T301 (lanes 1, 3).
  const __m256i area = _mm256_madd_epi16(d1, x);
  const __m256i chosen = _mm256_xor_si256(split, _mm256_setr_epi32(-1, 0, -1, 0, -1, 0, -1, 0));
  if (!_mm256_testz_si256(_mm256_cmpeq_epi32(area, _mm256_setzero_si256()), chosen)) {
    return splitExactPair(v01, v23, split);
  }
  return split;
}

// The split of one quad (splitMasks13 on the pair (quad, quad)): 1 for (v1,v2,v3),(v1,v3,v0), 0 for
// (v0,v1,v2),(v0,v2,v3).
template <int kAxis>
inline unsigned chooseSplit13(__m128i v01, __m128i v23) {
  const __m256i split = splitMasks13<kAxis>(_mm256_setr_m128i(v01, v01), _mm256_setr_m128i(v23, v23));
  return unsigned(_mm256_extract_epi32(split, 0)) & 1u;
}

}  // namespace vtp::mesher
