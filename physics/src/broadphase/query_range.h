#pragma once
// The voxels and chunks a broadphase query covers: the query box grown by one voxel (the mesher's spill bound) and
// mapped to the voxels whose centres (v + 0.5) lie inside it, ceil(lo - 1.5) .. floor(hi + 0.5). One definition for
// the mask index and the pair tracker, so a body is re-evaluated after an edit exactly when its query could change.

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "vtp/physics/mask_index.h"

namespace vtp::physics {

struct QueryRange {
  std::int32_t lo[3] = {}, hi[3] = {};  // voxels, inclusive (|v| <= 2^16 + 1) [Unit: voxel]
  bool empty = false;                   // no voxel centre inside
  terrain::ChunkCoord chunk_lo, chunk_hi;  // chunks, inclusive
  /// Chunks in the range (at most about 2^42 within the query limit).
  std::int64_t chunkCount() const {
    return (std::int64_t(chunk_hi.x) - chunk_lo.x + 1) * (std::int64_t(chunk_hi.y) - chunk_lo.y + 1) *
           (std::int64_t(chunk_hi.z) - chunk_lo.z + 1);
  }
  bool containsChunk(terrain::ChunkCoord c) const {
    return c.x >= chunk_lo.x && c.x <= chunk_hi.x && c.y >= chunk_lo.y && c.y <= chunk_hi.y && c.z >= chunk_lo.z &&
           c.z <= chunk_hi.z;
  }
};

/// Physics answers queries for |x| < 2^16 voxels (physics/README.md: single-precision contact maths loses a voxel's
/// precision beyond). [Unit: voxel]
inline constexpr double kQueryLimit = 65536.0;

/// The voxels of a valid query box in SIMD lanes (x, y, z, z), inclusive: what the mask index's fast path works on.
struct VoxelSpan {
  __m128i first, last;  // [Unit: voxel]
  /// No voxel centre inside on some axis.
  bool empty() const { return _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(first, last))) != 0; }
  /// Chunks by an arithmetic shift (floor division by the chunk size).
  __m128i firstChunk() const { return _mm_srai_epi32(first, 3); }
  __m128i lastChunk() const { return _mm_srai_epi32(last, 3); }
  QueryRange range() const {
    alignas(16) std::int32_t f[4], l[4], cf[4], cl[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(f), first);
    _mm_store_si128(reinterpret_cast<__m128i*>(l), last);
    _mm_store_si128(reinterpret_cast<__m128i*>(cf), firstChunk());
    _mm_store_si128(reinterpret_cast<__m128i*>(cl), lastChunk());
    QueryRange r;
    for (int a = 0; a < 3; ++a) {
      r.lo[a] = f[a];
      r.hi[a] = l[a];
    }
    r.empty = empty();
    r.chunk_lo = {cf[0], cf[1], cf[2]};
    r.chunk_hi = {cl[0], cl[1], cl[2]};
    return r;
  }
};
static_assert(terrain::kChunkSize == 8);

/// 1 / voxel_size when that is exact (a power-of-two voxel size), else 0. Multiplying by an exact reciprocal rounds
/// the same exact value as dividing, so it gives the division's result bit for bit, at a fraction of its latency.
inline double exactReciprocal(double voxel_size) {
  int exponent = 0;
  if (!(std::isfinite(voxel_size) && voxel_size > 0) || std::frexp(voxel_size, &exponent) != 0.5) return 0.0;
  const double r = 1.0 / voxel_size;
  return std::isfinite(r) ? r : 0.0;
}

/// How voxelSpanLanes scales a box to voxels: by the caller's `reciprocal` when it is not 0 (decided per call), or
/// known in advance to multiply by it or to divide by the voxel size (a batch decides once).
enum class Scaling { kByReciprocal, kMultiply, kDivide };

/// The voxel span of a query box into `s`, and its validity as AVX lanes: all four all-ones when the box is valid
/// (else `s` holds garbage; rangeErrorOf says why). `reciprocal` is exactReciprocal(voxel_size): when not 0, the box
/// is scaled by it instead of divided. Both corners go through AVX (lane 3 repeats z): one division or multiply each
/// and one compare per check, since every query pays for this; the rounding is the same IEEE operations as scalar
/// code.
template <Scaling kScaling = Scaling::kByReciprocal>
[[gnu::always_inline]] inline __m256d voxelSpanLanes(const Aabb& box, double voxel_size, double reciprocal,
                                                     VoxelSpan& s) {
  static_assert(offsetof(Aabb, max) == offsetof(Aabb, min) + 3 * sizeof(double) && sizeof(WorldVec3) == 24 &&
                offsetof(WorldVec3, y) == 8 && offsetof(WorldVec3, z) == 16);
  // (min x, y, z, max x) and (min z, max x, y, z), permuted to (x, y, z, z) of each corner.
  const __m256d lo = _mm256_permute_pd(_mm256_loadu_pd(&box.min.x), 0x2);
  const __m256d hi = _mm256_permute4x64_pd(_mm256_loadu_pd(&box.min.z), _MM_SHUFFLE(3, 3, 2, 1));
  __m256d v_lo, v_hi;
  if (kScaling == Scaling::kMultiply || (kScaling == Scaling::kByReciprocal && reciprocal != 0)) {
    v_lo = _mm256_mul_pd(lo, _mm256_set1_pd(reciprocal));
    v_hi = _mm256_mul_pd(hi, _mm256_set1_pd(reciprocal));
  } else {
    v_lo = _mm256_div_pd(lo, _mm256_set1_pd(voxel_size));
    v_hi = _mm256_div_pd(hi, _mm256_set1_pd(voxel_size));
  }
  // Voxels ceil(lo - 1.5) .. floor(hi + 0.5), exact in int32 below the limit.
  s.first = _mm256_cvttpd_epi32(
      _mm256_round_pd(_mm256_sub_pd(v_lo, _mm256_set1_pd(1.5)), _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC));
  s.last = _mm256_cvttpd_epi32(
      _mm256_round_pd(_mm256_add_pd(v_hi, _mm256_set1_pd(0.5)), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
  // Valid: |v| < 2^16 on both corners (false for NaN and infinities, so also "finite") and lo <= hi.
  const __m256d magnitude = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFF));
  const __m256d limit = _mm256_set1_pd(kQueryLimit);
  return _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(_mm256_and_pd(v_lo, magnitude), limit, _CMP_LT_OQ),
                                     _mm256_cmp_pd(_mm256_and_pd(v_hi, magnitude), limit, _CMP_LT_OQ)),
                       _mm256_cmp_pd(lo, hi, _CMP_LE_OQ));
}

/// The voxel span of a query box into `s`; false when the box is invalid (rangeErrorOf says why). See voxelSpanLanes.
template <Scaling kScaling = Scaling::kByReciprocal>
[[gnu::always_inline]] inline bool voxelSpan(const Aabb& box, double voxel_size, double reciprocal, VoxelSpan& s) {
  return _mm256_movemask_pd(voxelSpanLanes<kScaling>(box, voxel_size, reciprocal, s)) == 0xF;
}

/// Why voxelSpan rejected `box`: a non-finite coordinate or min > max on an axis (kInvalidArgument), else a
/// coordinate at or beyond 2^16 voxels from the origin (kOutOfRange); `who` names the caller in the message.
inline Error rangeErrorOf(const Aabb& box, double voxel_size, const char* who) {
  const double lo[3] = {box.min.x, box.min.y, box.min.z}, hi[3] = {box.max.x, box.max.y, box.max.z};
  bool finite = true, ordered = true;
  for (int a = 0; a < 3; ++a) {
    finite = finite && std::isfinite(lo[a]) && std::isfinite(hi[a]) && std::isfinite(lo[a] / voxel_size) &&
             std::isfinite(hi[a] / voxel_size);
    ordered = ordered && lo[a] <= hi[a];
  }
  if (!finite || !ordered) {
    return Error{ErrorCode::kInvalidArgument, std::string(who) + ": box must be finite with min <= max", {}};
  }
  return Error{ErrorCode::kOutOfRange, std::string(who) + ": box must lie within 2^16 voxels of the origin", {}};
}

/// `error` for box `position` of a batch: the same code, the message naming the box.
inline Error inBatch(const Error& error, std::size_t position) {
  return Error{error.code, error.message + " (box " + std::to_string(position) + " of the batch)", {}};
}

/// The range of a query box, or rangeErrorOf's error.
inline Result<QueryRange> queryRange(const Aabb& box, double voxel_size, double reciprocal, const char* who) {
  VoxelSpan s;
  if (!voxelSpan(box, voxel_size, reciprocal, s)) return rangeErrorOf(box, voxel_size, who);
  return s.range();
}

}  // namespace vtp::physics
