// The collider's accessors and the preparation of its queries (world units to the chunk's grid frame).
#include "vtp/physics/collider.h"

#include "query/world_frame_ray.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>

namespace vtp::physics {

namespace {

// Physics answers within |x| < 2^16 voxels (physics/README.md), as MaskIndex::query does. [Unit: voxel]
constexpr double kLimit = 65536.0;

// The chunk's origin in the world's grid frame as int32 lanes x, y, z, 0 (below 2^27 in magnitude for a chunk in
// physics range). [Unit: grid]
constexpr int kChunkGridShift = std::countr_zero(unsigned(terrain::kChunkSize * kGridScale));
static_assert(terrain::kChunkSize * kGridScale == 1 << kChunkGridShift);
__m128i chunkGridBase(terrain::ChunkCoord chunk) {
  return _mm_slli_epi32(_mm_setr_epi32(chunk.x, chunk.y, chunk.z, 0), kChunkGridShift);
}

// The same in double lanes 0-2. [Unit: grid]
__m256d chunkGridOrigin(terrain::ChunkCoord chunk) { return _mm256_cvtepi32_pd(chunkGridBase(chunk)); }


// x, y, z in lanes 0-2, and z again in lane 3: a padding lane that passes every check lane 2 passes (a zero there
// costs a zeroing move, one valgrind 3.19 cannot decode, so callgrind could not count these functions).
__m256d lanes(const std::array<double, 3>& v) { return _mm256_setr_pd(v[0], v[1], v[2], v[2]); }
__m256d lanes(const WorldVec3& v) { return _mm256_setr_pd(v.x, v.y, v.z, v.z); }

// Errors are built out of line: the hot path only tests.
[[gnu::noinline, gnu::cold]] Status rayError(ErrorCode code, const char* what) {
  return Error{code, std::string("prepareRay: ") + what, {}};
}

// Which error a ray prepareRay refused gets: a malformed ray (not finite, max_t < 0, a bad voxel size) is
// kInvalidArgument even where it is also far away; a well-formed one reaching 2^16 voxels from the origin, or a chunk
// beyond, is kOutOfRange.
[[gnu::noinline, gnu::cold]] Status refusedRay(const Ray& ray, double voxel_size) {
  bool finite = std::isfinite(ray.max_t) && ray.max_t >= 0 && std::isfinite(kGridScale / voxel_size) && voxel_size > 0;
  for (int a = 0; a < 3; ++a) {
    finite = finite && std::isfinite(ray.origin[std::size_t(a)]) && std::isfinite(ray.direction[std::size_t(a)]);
  }
  if (!finite) return rayError(ErrorCode::kInvalidArgument, "the ray must be finite with max_t >= 0");
  return rayError(ErrorCode::kOutOfRange, "the ray must lie within 2^16 voxels of the origin");
}

}  // namespace

bool chunkInPhysicsRange(terrain::ChunkCoord c) noexcept {
  // |c| <= kChunks on each axis, as one unsigned compare per axis.
  constexpr std::uint64_t kChunks = std::uint64_t(kLimit) / terrain::kChunkSize + 1;
  auto in = [](std::int32_t v) { return std::uint64_t(std::int64_t(v) + std::int64_t(kChunks)) <= 2 * kChunks; };
  return in(c.x) & in(c.y) & in(c.z);
}

Collider::~Collider() = default;

GridBox Collider::bounds() const noexcept {
  return {{m_bounds[0], m_bounds[1], m_bounds[2]}, {m_bounds[3], m_bounds[4], m_bounds[5]}};
}

GridBox Collider::leafBounds(int leaf) const noexcept {
  const std::int16_t* g = boxes() + 6 * kLeafGroup * (leaf / kLeafGroup) + leaf % kLeafGroup;
  return {{g[0], g[kLeafGroup], g[2 * kLeafGroup]}, {g[3 * kLeafGroup], g[4 * kLeafGroup], g[5 * kLeafGroup]}};
}

std::array<int, 2> Collider::leafTriangles(int leaf) const noexcept {
  return {leafStart()[leaf], leafStart()[leaf + 1]};
}

ColliderTriangle Collider::triangle(int id) const noexcept {
  ColliderTriangle t;
  for (int k = 0; k < 3; ++k) {
    const std::uint16_t i = corner(k)[id];
    const std::int16_t* p = positions() + (i & 0x7FFF);
    t.vertices[std::size_t(k)] = {p[0], p[1], p[2], 0};
    t.edge_flags = std::uint8_t(t.edge_flags | ((i >> 15) << k));
  }
  t.material = materials()[id];
  return t;
}

// prepareRay writes x, y, z of these arrays as 4-lane stores, each spilling its fourth lane into the next field,
// which the next store (or the segment bounds after the last) overwrites.
static_assert(offsetof(ChunkRay, origin_frac) == offsetof(ChunkRay, origin_int) + 12 &&
              offsetof(ChunkRay, direction) == offsetof(ChunkRay, origin_frac) + 12 &&
              offsetof(ChunkRay, inv_direction) == offsetof(ChunkRay, direction) + 12 &&
              offsetof(ChunkRay, segment_min) == offsetof(ChunkRay, inv_direction) + 12 &&
              offsetof(ChunkRay, segment_max) == offsetof(ChunkRay, segment_min) + 6 &&
              offsetof(ChunkRay, kz) >= offsetof(ChunkRay, segment_max) + 6);

namespace {

// The segment's grid bounds shifted to the chunk at `base`, saturated to int16 by the pack: min x, y, z, max x, y, z.
void writeSegment(__m128i lo, __m128i hi, __m128i base, ChunkRay& r) {
  const __m128i segment = _mm_shuffle_epi8(_mm_packs_epi32(_mm_sub_epi32(lo, base), _mm_sub_epi32(hi, base)),
                                           _mm_setr_epi8(0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, -1, -1, -1, -1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(r.segment_min.data()), segment);
  const std::uint32_t last = std::uint32_t(_mm_extract_epi32(segment, 2));
  std::memcpy(r.segment_max.data() + 1, &last, sizeof last);
}

// prepareRay for the chunk whose grid origin is `base` (`in_range`: the chunk is in physics range). The origin's
// integer part and the segment's grid bounds are taken in the world's grid frame and then shifted by `base` (an
// integer multiple of 8 kGridScale): every chunk gets the same fraction and the same point, bit for bit, and
// rayInChunk can shift a ray prepared once. The segment's bounds before the shift go to `world_segment`.
[[gnu::always_inline]] inline Status prepareRayAt(const Ray& ray, __m128i base, bool in_range, double voxel_size,
                                                  ChunkRay& r, __m128i (&world_segment)[2]) {
  // The three axes in the lanes of AVX registers, so the checks and conversions are a few vector operations: this
  // runs once per ray and chunk, and short rays cost little more than it.
  const __m256d sign = _mm256_set1_pd(-0.0);
  const __m256d origin = lanes(ray.origin), direction = lanes(ray.direction);
  const double scale = kGridScale / voxel_size;  // grid units per world unit
  const __m256d scale4 = _mm256_set1_pd(scale);
  const __m256d o = _mm256_mul_pd(origin, scale4);
  const __m256d e = _mm256_mul_pd(_mm256_add_pd(origin, _mm256_mul_pd(_mm256_set1_pd(ray.max_t), direction)), scale4);
  // Both ends strictly inside the limit (false for NaN) is all the hot path tests, besides the signs: with a positive
  // voxel size, it holds only for a finite origin, direction and max_t (an infinite or NaN one makes an end infinite
  // or NaN, 0 x inf included) and a finite scale. refusedRay works out which error a refused ray gets.
  const __m256d limit = _mm256_set1_pd(kLimit * kGridScale);
  const __m256d inside = _mm256_and_pd(_mm256_cmp_pd(_mm256_andnot_pd(sign, o), limit, _CMP_LT_OQ),
                                       _mm256_cmp_pd(_mm256_andnot_pd(sign, e), limit, _CMP_LT_OQ));
  if (!((_mm256_movemask_pd(inside) == 0xF) & (ray.max_t >= 0) & (voxel_size > 0) & in_range))
      [[unlikely]] {
    return refusedRay(ray, voxel_size);
  }
  // Inside, the ray runs along u = direction / d_max, whose largest component is +-1, its parameter s counting grid
  // units along that axis: t = s * t_per_s. So the floats below are of moderate size whatever the caller's direction
  // length (a direction of 1e-36 or 1e300 works), and no square root sits in the latency chain every ray waits on.
  const __m256d magnitude_d = _mm256_andnot_pd(sign, direction);
  const __m128d m2 = _mm_max_pd(_mm256_castpd256_pd128(magnitude_d), _mm256_extractf128_pd(magnitude_d, 1));
  const double d_max = _mm_cvtsd_f64(_mm_max_sd(m2, _mm_unpackhi_pd(m2, m2)));
  // t_per_s below is infinite for a zero direction, and for one so small (below about 5e-312 x voxel_size) that t
  // could not be given in the caller's units.
  r.t_per_s = (voxel_size / kGridScale) / d_max;
  if (!(r.t_per_s <= std::numeric_limits<double>::max())) [[unlikely]] {
    return rayError(ErrorCode::kInvalidArgument, "the direction is zero, or too small for t to be finite");
  }
  const __m256d d_max4 = _mm256_set1_pd(d_max);
  const __m256d unit = _mm256_div_pd(direction, d_max4);
  const __m256d reciprocal = _mm256_div_pd(d_max4, direction);  // +-inf for a zero component, replaced below
  r.world = ray;
  r.voxel_size = voxel_size;
  r.max_t = float(ray.max_t * d_max * scale);
  const __m256d whole = _mm256_floor_pd(o);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(r.origin_int.data()),
                   _mm_sub_epi32(_mm256_cvttpd_epi32(whole), base));
  _mm_storeu_ps(r.origin_frac.data(), _mm256_cvtpd_ps(_mm256_sub_pd(o, whole)));
  // The direction u (components below 1e-30 flushed to 0, so no reciprocal overflows) and its reciprocals (a huge
  // finite value for a zero component keeps the slab test free of NaN).
  __m128 d = _mm256_cvtpd_ps(unit);
  const __m128 magnitude = _mm_andnot_ps(_mm_set1_ps(-0.0f), d);
  d = _mm_and_ps(d, _mm_cmpge_ps(magnitude, _mm_set1_ps(1e-30f)));
  const __m128 is_zero = _mm_cmpeq_ps(d, _mm_setzero_ps());
  r.zero_axes = std::uint8_t(_mm_movemask_ps(is_zero) & 7);
  const __m128 huge = _mm_or_ps(_mm_set1_ps(1e30f), _mm_and_ps(d, _mm_set1_ps(-0.0f)));
  const __m128 inv = _mm_blendv_ps(_mm256_cvtpd_ps(reciprocal), huge, is_zero);
  _mm_storeu_ps(r.direction.data(), d);
  _mm_storeu_ps(r.inv_direction.data(), inv);
  // The segment's grid bounds, grown by 2 (int32: below 2^27 in magnitude).
  world_segment[0] = _mm256_cvttpd_epi32(_mm256_sub_pd(_mm256_floor_pd(_mm256_min_pd(o, e)), _mm256_set1_pd(2.0)));
  world_segment[1] = _mm256_cvttpd_epi32(_mm256_add_pd(_mm256_ceil_pd(_mm256_max_pd(o, e)), _mm256_set1_pd(2.0)));
  writeSegment(world_segment[0], world_segment[1], base, r);
  // Woop et al.: z along the dominant axis (the first of equal ones), x and y the next two cyclically.
  const float a0 = std::abs(r.direction[0]), a1 = std::abs(r.direction[1]), a2 = std::abs(r.direction[2]);
  const bool z_largest = a2 > std::max(a0, a1);
  r.kz = 2 * int(z_largest) + int(!z_largest & (a1 > a0));  // arithmetic, no branch: which axis dominates is data
  constexpr int kNext[3] = {1, 2, 0}, kAfter[3] = {2, 0, 1};
  r.shear_z = r.inv_direction[std::size_t(r.kz)];
  r.shear_x = r.direction[std::size_t(kNext[r.kz])] * r.shear_z;
  r.shear_y = r.direction[std::size_t(kAfter[r.kz])] * r.shear_z;
  return {};
}

}  // namespace

Status prepareRay(const Ray& ray, terrain::ChunkCoord chunk, double voxel_size, ChunkRay& r) {
  __m128i world_segment[2] = {};
  return prepareRayAt(ray, chunkGridBase(chunk), chunkInPhysicsRange(chunk), voxel_size, r, world_segment);
}

Status prepareWorldFrameRay(const Ray& ray, double voxel_size, WorldFrameRay& out) {
  __m128i world_segment[2] = {};
  if (Status s = prepareRayAt(ray, _mm_setzero_si128(), true, voxel_size, out.ray, world_segment); !s) return s;
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out.segment_min.data()), world_segment[0]);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out.segment_max.data()), world_segment[1]);
  return {};
}

Status rayInChunk(const WorldFrameRay& w, terrain::ChunkCoord chunk, ChunkRay& out) {
  if (!chunkInPhysicsRange(chunk)) [[unlikely]] {
    return rayError(ErrorCode::kOutOfRange, "the chunk lies beyond 2^16 voxels of the origin");
  }
  out = w.ray;
  // origin_int and, in lane 3, origin_frac[0], which base's lane 3 (zero) leaves as it is.
  const __m128i base = chunkGridBase(chunk);
  __m128i* origin = reinterpret_cast<__m128i*>(out.origin_int.data());
  _mm_storeu_si128(origin, _mm_sub_epi32(_mm_loadu_si128(origin), base));
  writeSegment(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.segment_min.data())),
               _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.segment_max.data())), base, out);
  return {};
}

Status gridBoxOf(const std::array<double, 3>& min, const std::array<double, 3>& max, terrain::ChunkCoord chunk,
                 double voxel_size, GridBox& out) {
  // As prepareRay: the three axes in AVX lanes.
  const __m256d sign = _mm256_set1_pd(-0.0);
  const __m256d lo = lanes(min), hi = lanes(max);
  const double scale = kGridScale / voxel_size;
  const __m256d scale4 = _mm256_set1_pd(scale);
  const __m256d lo_grid = _mm256_mul_pd(lo, scale4), hi_grid = _mm256_mul_pd(hi, scale4);
  const __m256d limit = _mm256_set1_pd(kLimit * kGridScale);  // also false for NaN
  const __m256d ok = _mm256_and_pd(_mm256_cmp_pd(_mm256_andnot_pd(sign, lo_grid), limit, _CMP_LT_OQ),
                                   _mm256_cmp_pd(_mm256_andnot_pd(sign, hi_grid), limit, _CMP_LT_OQ));
  const __m256d ordered = _mm256_cmp_pd(lo, hi, _CMP_LE_OQ);  // false for NaN
  if (_mm256_movemask_pd(ok) != 0xF || _mm256_movemask_pd(ordered) != 0xF || !std::isfinite(scale) ||
      !(voxel_size > 0)) [[unlikely]] {
    const bool finite = std::isfinite(scale) && voxel_size > 0 && std::isfinite(min[0]) && std::isfinite(min[1]) &&
                        std::isfinite(min[2]) && std::isfinite(max[0]) && std::isfinite(max[1]) && std::isfinite(max[2]);
    if (!finite || _mm256_movemask_pd(ordered) != 0xF) {
      return Error{ErrorCode::kInvalidArgument, "gridBoxOf: box must be finite with min <= max", {}};
    }
    return Error{ErrorCode::kOutOfRange, "gridBoxOf: box must lie within 2^16 voxels of the origin", {}};
  }
  if (!chunkInPhysicsRange(chunk)) [[unlikely]] {
    return Error{ErrorCode::kOutOfRange, "gridBoxOf: the chunk lies beyond 2^16 voxels of the origin", {}};
  }
  const __m256d base = chunkGridOrigin(chunk);
  alignas(16) std::int32_t l[4], h[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(l), _mm256_cvttpd_epi32(_mm256_ceil_pd(_mm256_sub_pd(lo_grid, base))));
  _mm_store_si128(reinterpret_cast<__m128i*>(h), _mm256_cvttpd_epi32(_mm256_floor_pd(_mm256_sub_pd(hi_grid, base))));
  out.min = {l[0], l[1], l[2]};
  out.max = {h[0], h[1], h[2]};
  return {};
}

}  // namespace vtp::physics
