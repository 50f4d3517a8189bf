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
[[gnu::cold]] [[gnu::noinline]] inline unsigned splitExact(__m128i v01, __m128i v23, unsigned split13) {
  Vertex v[4];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(v), v01);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(v + 2), v23);
  if (!split13) return degenerate(v[0], v[1], v[2]) || degenerate(v[0], v[2], v[3]);
  return !(degenerate(v[1], v[2], v[3]) || degenerate(v[1], v[3], v[0]));
}

// The split of quad v0 v1 v2 v3 around an edge along kAxis, given as v01 = cornerPair(v0, v1) and v23 =
// cornerPair(v2, v3): 1 for (v1,v2,v3),(v1,v3,v0), 0 for (v0,v1,v2),(v0,v2,v3). The reversed quad v0 v3 v2 v1 gets
// the same answer (same diagonals, same triangles as vertex sets), so it is asked in one orientation only.
template <int kAxis>
inline unsigned chooseSplit13(__m128i v01, __m128i v23) {
  // Squared diagonals |v0 - v2|^2 and |v1 - v3|^2 in one pmaddwd (coordinates in a quad differ by < 2^10); the
  // tag lanes are masked off one factor.
  const __m128i diff = _mm_sub_epi16(v01, v23);
  const __m128i xyz = _mm_setr_epi16(-1, -1, -1, 0, -1, -1, -1, 0);
  const __m128i sq = _mm_madd_epi16(diff, _mm_and_si128(diff, xyz));  // (d02 xy, d02 z, d13 xy, d13 z)
  const __m128i len = _mm_hadd_epi32(sq, sq);                         // (d02, d13, ...)
  const unsigned split13 = _mm_extract_epi32(len, 1) < _mm_cvtsi128_si32(len) ? 1u : 0u;
  // P = (b0,c0, b1,c1, b2,c2, b3,c3): the coordinates across the edge axis. With cr(i,j) = b_i c_j - c_i b_j,
  // E = (cr01, cr12, cr23, cr30) and D = (cr02, cr13, cr20, cr31), each one pmaddwd of P with the pairs of
  // N = (-b0,c0, -b1,c1, ...) rotated and swapped into (c, -b); twice the projected areas are then sums of three
  // crosses (shoelace).
  constexpr char kB = 2 * ((kAxis + 1) % 3), kC = 2 * ((kAxis + 2) % 3);
  const __m128i pick = _mm_setr_epi8(kB, kB + 1, kC, kC + 1, 8 + kB, 9 + kB, 8 + kC, 9 + kC, -1, -1, -1, -1, -1, -1,
                                     -1, -1);
  const __m128i p = _mm_unpacklo_epi64(_mm_shuffle_epi8(v01, pick), _mm_shuffle_epi8(v23, pick));
  const __m128i n = _mm_sign_epi16(p, _mm_setr_epi16(-1, 1, -1, 1, -1, 1, -1, 1));
  const __m128i rot1 = _mm_setr_epi8(6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1);
  const __m128i rot2 = _mm_setr_epi8(10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5);
  const __m128i e = _mm_madd_epi16(p, _mm_shuffle_epi8(n, rot1));
  const __m128i d = _mm_madd_epi16(p, _mm_shuffle_epi8(n, rot2));
  // Areas of (0,1,2) = E0+E1+D2, (0,2,3) = D0+E2+E3, (1,2,3) = E1+E2+D3, (1,3,0) = D1+E3+E0; as D2 = -D0 and
  // D3 = -D1, that is (E0+E1, E1+E2, E2+E3, E3+E0) - D = (T012, T123, T023, T130).
  const __m128i area = _mm_sub_epi32(_mm_add_epi32(e, _mm_shuffle_epi32(e, _MM_SHUFFLE(0, 3, 2, 1))), d);
  const int flat = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(area, _mm_setzero_si128())));
  // Split 0 makes T012 and T023 (lanes 0, 2), split 1 T123 and T130 (lanes 1, 3).
  if (((flat >> split13) & 0b0101) != 0) return splitExact(v01, v23, split13);
  return split13;
}

}  // namespace vtp::mesher
