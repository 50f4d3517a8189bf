#pragma once
// The walk over the chunks a world ray may hit: a 3D DDA over the chunk grid (Amanatides and Woo, 1987), widened by
// the mesher's spill. A chunk's triangles lie within its bounds grown by one voxel, and the point where a ray enters
// such grown bounds lies in some chunk the DDA crosses, within one voxel of the segment's part there, so every chunk
// the ray can hit is found near that part no later than the DDA reaches its entry point. Candidates wait in a
// min-heap by that entry and are released in order as the DDA passes it, so chunks are visited in order of entry and
// a caller can stop at the first chunk entered beyond its best hit.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "vtp/physics/collider.h"
#include "vtp/terrain/coords.h"

namespace vtp::physics {

namespace chunk_walk {

struct Candidate {
  double entry;
  terrain::ChunkCoord chunk;
  bool operator>(const Candidate& other) const {
    return entry != other.entry ? entry > other.entry : other.chunk < chunk;
  }
};

}  // namespace chunk_walk

/// Visits, in order of entry and once each, the chunks whose bounds grown by one voxel the segment enters:
/// `visit(chunk, entry_t)` returns false to stop. The ray must be one prepareRay accepts. [Unit: voxel_size is world
/// units per voxel; entry_t is in Ray::direction units]
template <class Visit>
void walkChunks(const Ray& ray, double voxel_size, Visit&& visit) {
  const double size = terrain::kChunkSize * voxel_size, grow = voxel_size;
  // The walk runs along u = direction * 2^-exponent, whose largest component lies in [0.5, 1), with parameter
  // s = t * 2^exponent (the t_ values below are in s): scaling by a power of two is exact, so each equals, bit for
  // bit, the t computed from the direction itself, while no reciprocal overflows for a tiny direction. Components
  // prepareRay flushes to zero (below 1e-30 of the largest) are zero here too, with a few more (up to 2e-30 of it):
  // over the whole segment they move the ray by far less than the margin `reach` below.
  int exponent = 0;
  const double d_max = std::max({std::abs(ray.direction[0]), std::abs(ray.direction[1]), std::abs(ray.direction[2])});
  std::frexp(d_max, &exponent);
  std::array<double, 3> direction{};
  for (std::size_t a = 0; a < 3; ++a) {
    direction[a] = std::ldexp(ray.direction[a], -exponent);
    if (std::abs(direction[a]) < 1e-30) direction[a] = 0;
  }
  const double max_s = std::ldexp(ray.max_t, exponent);
  // The DDA: along each axis, the t of the next chunk boundary and the t between boundaries.
  std::array<double, 3> t_next{}, t_delta{}, inv{};
  for (std::size_t a = 0; a < 3; ++a) {
    const double o = ray.origin[a], d = direction[a];
    const double cell = std::floor(o / size);
    inv[a] = d != 0 ? 1.0 / d : 0.0;
    // Never below 0: rounding in floor(o / size) can put the first boundary a hair behind the origin, and a negative
    // start on two axes would make the ranges below shrink and grow again, queueing a chunk twice.
    t_next[a] = d == 0 ? HUGE_VAL : std::max(0.0, ((cell + (d > 0 ? 1.0 : 0.0)) * size - o) * inv[a]);
    t_delta[a] = d == 0 ? HUGE_VAL : size * std::abs(inv[a]);
  }
  // The entry of the segment into chunk c's grown bounds, or a negative value when it misses them: the slab test with
  // the axes in AVX lanes (x, y, z, z). An axis the ray runs parallel to passes when the origin lies in its slab.
  const __m256d origin = _mm256_setr_pd(ray.origin[0], ray.origin[1], ray.origin[2], ray.origin[2]);
  const __m256d reciprocal = _mm256_setr_pd(inv[0], inv[1], inv[2], inv[2]);
  const __m256d parallel = _mm256_cmp_pd(
      _mm256_setr_pd(direction[0], direction[1], direction[2], direction[2]), _mm256_setzero_pd(),
      _CMP_EQ_OQ);
  const __m256d size4 = _mm256_set1_pd(size), grow4 = _mm256_set1_pd(grow), one = _mm256_set1_pd(1.0);
  const __m256d infinity = _mm256_set1_pd(HUGE_VAL), minus_infinity = _mm256_set1_pd(-HUGE_VAL);
  auto entryInto = [&](terrain::ChunkCoord c) {
    const __m256d k = _mm256_cvtepi32_pd(_mm_setr_epi32(c.x, c.y, c.z, c.z));
    const __m256d lo = _mm256_sub_pd(_mm256_mul_pd(k, size4), grow4);
    const __m256d hi = _mm256_add_pd(_mm256_mul_pd(_mm256_add_pd(k, one), size4), grow4);
    const __m256d a = _mm256_mul_pd(_mm256_sub_pd(lo, origin), reciprocal);
    const __m256d b = _mm256_mul_pd(_mm256_sub_pd(hi, origin), reciprocal);
    const __m256d inside = _mm256_and_pd(_mm256_cmp_pd(origin, lo, _CMP_GE_OQ), _mm256_cmp_pd(origin, hi, _CMP_LE_OQ));
    const __m256d near = _mm256_blendv_pd(_mm256_min_pd(a, b), _mm256_blendv_pd(infinity, minus_infinity, inside),
                                          parallel);
    const __m256d far = _mm256_blendv_pd(_mm256_max_pd(a, b), infinity, parallel);
    const __m128d n = _mm_max_pd(_mm256_castpd256_pd128(near), _mm256_extractf128_pd(near, 1));
    const __m128d f = _mm_min_pd(_mm256_castpd256_pd128(far), _mm256_extractf128_pd(far, 1));
    const double t0 = std::max(0.0, _mm_cvtsd_f64(_mm_max_sd(n, _mm_unpackhi_pd(n, n))));
    const double t1 = std::min(max_s, _mm_cvtsd_f64(_mm_min_sd(f, _mm_unpackhi_pd(f, f))));
    return t0 <= t1 ? t0 : -1.0;
  };
  // A min-heap by entry in a per-thread vector, reused from ray to ray (no allocation once it has grown).
  thread_local std::vector<chunk_walk::Candidate> heap;
  heap.clear();
  const auto later = std::greater<>{};
  double t_entry = 0;
  bool going = true, first = true;
  // Chunks the previous DDA chunk's part of the segment could reach, as a range per axis.
  std::array<std::int64_t, 3> previous_lo{}, previous_hi{};
  // The margin the ranges below are grown by beyond `grow`, so that rounding in the points never drops a chunk (a
  // chunk too many only costs its entryInto).
  const double reach = grow * (1 + 1e-9) + 1e-12 * size;
  while (going) {
    const std::size_t axis = std::size_t(std::min_element(t_next.begin(), t_next.end()) - t_next.begin());
    // Queue the chunks whose grown bounds the segment enters while it crosses the current DDA chunk, once each. Such
    // an entry point lies in this part of the segment, [t_entry, t_exit], so within `grow` of its bounding box: only
    // the chunks that box, grown by `grow`, overlaps need the entry test (one or two, near a face up to eight). The
    // boxes move monotonically along every axis, so the steps whose range holds a chunk form one run, and a chunk
    // was queued before exactly when the previous range also holds it.
    const double t_exit = std::min(t_next[axis], max_s);
    std::array<std::int64_t, 3> lo{}, hi{};
    for (std::size_t a = 0; a < 3; ++a) {
      const double p0 = ray.origin[a] + t_entry * direction[a], p1 = ray.origin[a] + t_exit * direction[a];
      lo[a] = std::int64_t(std::floor((std::min(p0, p1) - reach) / size));
      hi[a] = std::int64_t(std::floor((std::max(p0, p1) + reach) / size));
    }
    auto queue = [&](std::int64_t x, std::int64_t y, std::int64_t z) {
      const terrain::ChunkCoord c{std::int32_t(x), std::int32_t(y), std::int32_t(z)};
      const double entry = entryInto(c);
      if (entry >= 0) {
        heap.push_back({entry, c});
        std::push_heap(heap.begin(), heap.end(), later);
      }
    };
    for (std::int64_t z = lo[2]; z <= hi[2]; ++z)
      for (std::int64_t y = lo[1]; y <= hi[1]; ++y) {
        // The part of this row of chunks the previous range held, [seen_lo, seen_hi], is skipped.
        const bool row_seen = !first && z >= previous_lo[2] && z <= previous_hi[2] && y >= previous_lo[1] &&
                              y <= previous_hi[1];
        std::int64_t seen_lo = std::max(lo[0], previous_lo[0]), seen_hi = std::min(hi[0], previous_hi[0]);
        if (!row_seen || seen_lo > seen_hi) seen_lo = hi[0] + 1, seen_hi = hi[0];
        for (std::int64_t x = lo[0]; x < seen_lo; ++x) queue(x, y, z);
        for (std::int64_t x = seen_hi + 1; x <= hi[0]; ++x) queue(x, y, z);
      }
    first = false;
    previous_lo = lo;
    previous_hi = hi;
    t_entry = t_next[axis];
    const bool more = t_entry <= max_s;
    // Release every candidate entered before the DDA's next chunk: none can be found later.
    while (!heap.empty() && (!more || heap.front().entry <= t_entry)) {
      std::pop_heap(heap.begin(), heap.end(), later);
      const chunk_walk::Candidate next = heap.back();
      heap.pop_back();
      if (!visit(next.chunk, std::ldexp(next.entry, -exponent))) {
        going = false;
        break;
      }
    }
    if (!more) break;
    t_next[axis] += t_delta[axis];
  }
}

}  // namespace vtp::physics
