// Ray queries on a collider: a SIMD scan of the leaf boxes (8 per step) collects the leaves the segment enters, then
// the leaves are tested in order of entry with the watertight triangle test, 8 triangles per step, until the next
// entry lies beyond the best hit. Woop, Benthin and Wald, "Watertight Ray/Triangle Intersection", JCGT 2(1), 2013:
// translate the vertices to the ray origin, shear so the ray runs along +z, and take the signs of the three 2D edge
// functions; an edge function that is exactly zero is recomputed in double, so a ray through a shared edge or vertex
// sees consistent signs on both sides. Products and differences are kept separate (the build has
// -ffp-contract=off): a fused multiply-subtract would round the two triangles of an edge differently.
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "collider/corner_load.h"
#include "collider/leaf_boxes.h"
#include "vtp/physics/collider.h"

namespace vtp::physics {

namespace {

// Leaf entries collected before they are sorted and tested: a few hundred bytes of stack. A ray entering more leaves
// (a long ray along a large chunk) is handled in several batches, each in order of entry; correctness never depends
// on the order across batches, only the early stop does.
constexpr int kBatch = 64;

// The ray in 8 lanes, in Woop's axes: z is the direction's largest axis kz, x and y the next two cyclically (the
// paper swaps x and y for a negative z to keep the winding; a double-sided test does not need it). The vertices are
// put in the same order as they load (loadCorner's `order`), so one kernel serves every kz, with no dispatch on it:
// which axis dominates is data, and a branch on it mispredicted for most rays.
struct RayLanes {
  __m256i order;  // bytes of each 8-byte vertex (x, y, z, pad as int16) reordered to Woop's x, y, z, pad
  __m256i origin_int[3];
  __m256 origin_frac[3];
  __m256 shear_x, shear_y, shear_z;

  explicit RayLanes(const ChunkRay& r) {
    // Per kz, the byte shuffle of two vertices per 128-bit lane: words (kz + 1, kz + 2, kz, 3) of each.
    alignas(32) static constexpr std::uint8_t kOrder[3][32] = {
        {2, 3, 4, 5, 0, 1, 6, 7, 10, 11, 12, 13, 8, 9, 14, 15, 2, 3, 4, 5, 0, 1, 6, 7, 10, 11, 12, 13, 8, 9, 14, 15},
        {4, 5, 0, 1, 2, 3, 6, 7, 12, 13, 8, 9, 10, 11, 14, 15, 4, 5, 0, 1, 2, 3, 6, 7, 12, 13, 8, 9, 10, 11, 14, 15},
        {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}};
    order = _mm256_load_si256(reinterpret_cast<const __m256i*>(kOrder[r.kz]));
    const int axis[3] = {(r.kz + 1) % 3, (r.kz + 2) % 3, r.kz};
    for (int k = 0; k < 3; ++k) {
      origin_int[k] = _mm256_set1_epi32(r.origin_int[std::size_t(axis[k])]);
      origin_frac[k] = _mm256_set1_ps(r.origin_frac[std::size_t(axis[k])]);
    }
    shear_x = _mm256_set1_ps(r.shear_x);
    shear_y = _mm256_set1_ps(r.shear_y);
    shear_z = _mm256_set1_ps(r.shear_z);
  }
};

struct Sheared {
  __m256 x, y, z;
};

// Vertices relative to the ray origin, sheared: vertex minus the origin's integer part is exact in int32, minus the
// fraction rounds once, so both chunks of a seam get the same floats.
inline Sheared shear(const Corner& p, const RayLanes& r) {
  __m256 rel[3];
  for (int k = 0; k < 3; ++k) {
    const __m256i v = p.axis[k];  // loaded in Woop's order
    rel[k] = _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, r.origin_int[k])), r.origin_frac[k]);
  }
  return {_mm256_sub_ps(rel[0], _mm256_mul_ps(r.shear_x, rel[2])), _mm256_sub_ps(rel[1], _mm256_mul_ps(r.shear_y, rel[2])),
          _mm256_mul_ps(r.shear_z, rel[2])};
}

// a.x * b.y - a.y * b.x, lane by lane.
inline __m256 edge(const Sheared& a, const Sheared& b) {
  return _mm256_sub_ps(_mm256_mul_ps(a.x, b.y), _mm256_mul_ps(a.y, b.x));
}

// The same in double, rounded to float.
inline __m256 edgeExact(const Sheared& a, const Sheared& b) {
  auto half = [](__m128 ax, __m128 ay, __m128 bx, __m128 by) {
    const __m256d p = _mm256_mul_pd(_mm256_cvtps_pd(ax), _mm256_cvtps_pd(by));
    const __m256d q = _mm256_mul_pd(_mm256_cvtps_pd(ay), _mm256_cvtps_pd(bx));
    return _mm256_cvtpd_ps(_mm256_sub_pd(p, q));
  };
  const __m128 lo = half(_mm256_castps256_ps128(a.x), _mm256_castps256_ps128(a.y), _mm256_castps256_ps128(b.x),
                         _mm256_castps256_ps128(b.y));
  const __m128 hi = half(_mm256_extractf128_ps(a.x, 1), _mm256_extractf128_ps(a.y, 1), _mm256_extractf128_ps(b.x, 1),
                         _mm256_extractf128_ps(b.y, 1));
  return _mm256_set_m128(hi, lo);
}

// Tests triangles [first, first + count) (count in 1..8): bit i of the result is set when triangle first + i is hit
// at t[i] in [0, limit]. `corners` are the three index arrays.
unsigned testBlock(const std::int16_t* positions, const std::uint16_t* const* corners, int first, int count,
                   const RayLanes& r, float limit, float* t_out) {
  const Sheared a = shear(loadCorner(positions, corners[0], first, r.order), r);
  const Sheared b = shear(loadCorner(positions, corners[1], first, r.order), r);
  const Sheared c = shear(loadCorner(positions, corners[2], first, r.order), r);
  __m256 u = edge(c, b), v = edge(a, c), w = edge(b, a);
  const __m256 zero = _mm256_setzero_ps();
  const __m256 u0 = _mm256_cmp_ps(u, zero, _CMP_EQ_OQ), v0 = _mm256_cmp_ps(v, zero, _CMP_EQ_OQ),
               w0 = _mm256_cmp_ps(w, zero, _CMP_EQ_OQ);
  // An edge function exactly zero: recompute that triangle's three in double (Woop et al.), unless all three are
  // zero: then the ray lies in the triangle's plane (as far as float can tell) and misses it either way.
  const __m256 redo = _mm256_andnot_ps(_mm256_and_ps(_mm256_and_ps(u0, v0), w0), _mm256_or_ps(_mm256_or_ps(u0, v0), w0));
  if (_mm256_movemask_ps(redo) != 0) {
    u = _mm256_blendv_ps(u, edgeExact(c, b), redo);
    v = _mm256_blendv_ps(v, edgeExact(a, c), redo);
    w = _mm256_blendv_ps(w, edgeExact(b, a), redo);
  }
  const __m256 negative = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(u, zero, _CMP_LT_OQ), _mm256_cmp_ps(v, zero, _CMP_LT_OQ)),
                                       _mm256_cmp_ps(w, zero, _CMP_LT_OQ));
  const __m256 positive = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(u, zero, _CMP_GT_OQ), _mm256_cmp_ps(v, zero, _CMP_GT_OQ)),
                                       _mm256_cmp_ps(w, zero, _CMP_GT_OQ));
  const __m256 det = _mm256_add_ps(_mm256_add_ps(u, v), w);
  const __m256 big_t = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(u, a.z), _mm256_mul_ps(v, b.z)), _mm256_mul_ps(w, c.z));
  // + 0 turns a -0 (a hit at the origin seen along a negative axis) into +0, which sorts first as bits.
  const __m256 t = _mm256_add_ps(_mm256_div_ps(big_t, det), zero);
  const __m256 in_range =
      _mm256_and_ps(_mm256_cmp_ps(t, zero, _CMP_GE_OQ), _mm256_cmp_ps(t, _mm256_set1_ps(limit), _CMP_LE_OQ));
  const __m256 hit = _mm256_andnot_ps(_mm256_and_ps(negative, positive),
                                      _mm256_and_ps(in_range, _mm256_cmp_ps(det, zero, _CMP_NEQ_OQ)));
  _mm256_storeu_ps(t_out, t);
  return unsigned(_mm256_movemask_ps(hit)) & ((1u << count) - 1);
}

}  // namespace

template <class Visit>
void Collider::castRay(const ChunkRay& ray, Visit&& visit) const noexcept {
  if (m_triangles == 0) return;
  // A flat collider (all triangles in one axis plane: a floor or wall, common in flat worlds) and a ray parallel to
  // it: the ray either never reaches the plane or lies in it, and a ray in a triangle's plane may miss it. Exact.
  if ((ray.zero_axes & m_flat_axes) != 0) return;
  castRayScan(ray, visit);
}

template <class Visit>
void Collider::castRayScan(const ChunkRay& ray, Visit& visit) const noexcept {
  const std::uint16_t* const corners[3] = {corner(0), corner(1), corner(2)};
  // Two tests per group of 8 leaf boxes. First the segment's integer bounding box against the boxes (int16 compares,
  // exact): a short ray skips most groups and leaves here. Then slabs in float for the survivors, with the boxes
  // grown by a margin so rounding never drops a leaf the exact test hits: t = (plane - origin) / direction, as
  // (plane - origin_int) * inv - origin_frac * inv. Planes lie within `far` grid units of the origin; converting and
  // multiplying err by less than far / 2^22 units, so the margin is one unit plus that (one unit for an origin within
  // 4,000 voxels of the chunk).
  std::int32_t far = 16 * kGridScale;
  for (int a = 0; a < 3; ++a) far = std::max(far, std::abs(ray.origin_int[std::size_t(a)]) + 16 * kGridScale);
  const std::int32_t margin = 1 + (far >> 22);
  __m128i segment_lo[3], segment_hi[3];
  __m256i lo_base[3], hi_base[3];
  __m256 inv[3], frac_inv[3];
  for (int a = 0; a < 3; ++a) {
    segment_lo[a] = _mm_set1_epi16(ray.segment_min[std::size_t(a)]);
    segment_hi[a] = _mm_set1_epi16(ray.segment_max[std::size_t(a)]);
    lo_base[a] = _mm256_set1_epi32(ray.origin_int[std::size_t(a)] + margin);
    hi_base[a] = _mm256_set1_epi32(ray.origin_int[std::size_t(a)] - margin);
    inv[a] = _mm256_set1_ps(ray.inv_direction[std::size_t(a)]);
    frac_inv[a] = _mm256_set1_ps(ray.origin_frac[std::size_t(a)] * ray.inv_direction[std::size_t(a)]);
  }
  // Entry t (non-negative float bits, which order like the floats) above, leaf below: one integer sort.
  std::uint64_t entries[kBatch];
  int n = 0;
  alignas(32) float t[8];
  // Sorts the batch and tests its leaves in order of entry, skipping those entered beyond the best hit so far. Returns
  // false when the visitor is done.
  auto flush = [&]() {
    if (n <= 16) {
      for (int i = 1; i < n; ++i)
        for (int j = i; j > 0 && entries[j] < entries[j - 1]; --j) std::swap(entries[j], entries[j - 1]);
    } else {
      std::sort(entries, entries + n);
    }
    const int count = n;
    n = 0;
    if (count == 0) return true;
    const RayLanes lanes(ray);  // the triangle kernel's ray, set up only for a ray that enters a leaf
    for (int e = 0; e < count; ++e) {
      if (std::bit_cast<float>(std::uint32_t(entries[e] >> 32)) > visit.limit()) return true;  // the rest enter later
      const int leaf = int(entries[e] & 0xFFFFFFFFu);
      const int last = leafStart()[leaf + 1];
      for (int first = leafStart()[leaf]; first < last; first += kTriangleBlock) {
        const unsigned hits =
            testBlock(positions(), corners, first, std::min(kTriangleBlock, last - first), lanes, visit.limit(), t);
        if (hits != 0 && !visit(first, hits, t)) return false;
      }
    }
    return true;
  };
  // Up to 8 groups (64 leaves) a round, without a branch on what the tests find (which groups and leaves a ray
  // enters is data; branching on it mispredicted more than once a ray): the box test of every group, its candidates'
  // bits side by side in one word; the slabs of the groups with candidates, one set bit at a time; then the entered
  // leaves, one set bit at a time.
  const int groups = groupCount();
  alignas(32) std::uint32_t near_bits[8 * kLeafGroup];  // entry t of leaf 8 i + lane of the round, as float bits
  for (int round = 0; round < groups; round += 8) {
    const std::uint64_t candidates = overlappingLeaves(boxes() + 6 * kLeafGroup * round, std::min(8, groups - round),
                                                       int(m_leaves) - kLeafGroup * round, segment_lo, segment_hi);
    unsigned with_candidates = groupsWithLeaves(candidates);
    std::uint64_t entered = 0;
    for (; with_candidates != 0; with_candidates &= with_candidates - 1) {
      const int i = std::countr_zero(with_candidates);
      const std::int16_t* box = boxes() + 6 * kLeafGroup * (round + i);
      __m256 t_near = _mm256_setzero_ps(), t_far = _mm256_set1_ps(ray.max_t);
      for (int a = 0; a < 3; ++a) {
        const __m128i lo = _mm_load_si128(reinterpret_cast<const __m128i*>(box + a * kLeafGroup));
        const __m128i hi = _mm_load_si128(reinterpret_cast<const __m128i*>(box + (3 + a) * kLeafGroup));
        const __m256 t_lo = _mm256_fmsub_ps(
            _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepi16_epi32(lo), lo_base[a])), inv[a], frac_inv[a]);
        const __m256 t_hi = _mm256_fmsub_ps(
            _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepi16_epi32(hi), hi_base[a])), inv[a], frac_inv[a]);
        t_near = _mm256_max_ps(t_near, _mm256_min_ps(t_lo, t_hi));
        t_far = _mm256_min_ps(t_far, _mm256_max_ps(t_lo, t_hi));
      }
      _mm256_store_ps(reinterpret_cast<float*>(near_bits + kLeafGroup * i), t_near);
      const unsigned slab = unsigned(_mm256_movemask_ps(_mm256_cmp_ps(t_near, t_far, _CMP_LE_OQ)));
      entered |= std::uint64_t(slab & unsigned(candidates >> (kLeafGroup * i))) << (kLeafGroup * i);
    }
    for (; entered != 0; entered &= entered - 1) {
      const int bit = std::countr_zero(entered);
      if (n == kBatch && !flush()) return;
      entries[n++] = std::uint64_t(near_bits[bit]) << 32 | std::uint32_t(kLeafGroup * round + bit);
    }
  }
  (void)flush();
}

RayHit Collider::makeHit(const ChunkRay& ray, int id, float t) const noexcept {
  RayHit h;
  h.t = double(t) * ray.t_per_s;
  h.triangle = id;
  h.material = materials()[id];
  for (int a = 0; a < 3; ++a) {
    h.point[std::size_t(a)] = ray.world.origin[std::size_t(a)] + h.t * ray.world.direction[std::size_t(a)];
  }
  // The normal from exact integer edges (int32 suffices: coordinates lie in -1535..9727, which the builder checks, so
  // edges are below 2^14 and products below 2^28) and one reciprocal square root; the grid is isotropic, so it is the
  // world normal too.
  const std::int16_t* p = positions();
  const std::int16_t* v0 = p + (corner(0)[id] & 0x7FFF);
  const std::int16_t* v1 = p + (corner(1)[id] & 0x7FFF);
  const std::int16_t* v2 = p + (corner(2)[id] & 0x7FFF);
  const std::int32_t e1[3] = {v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2]};
  const std::int32_t e2[3] = {v2[0] - v0[0], v2[1] - v0[1], v2[2] - v0[2]};
  const double n[3] = {double(e1[1] * e2[2] - e1[2] * e2[1]), double(e1[2] * e2[0] - e1[0] * e2[2]),
                       double(e1[0] * e2[1] - e1[1] * e2[0])};
  const double length2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
  const double scale = length2 > 0 ? 1.0 / std::sqrt(length2) : 0.0;
  double facing = 0;
  for (int a = 0; a < 3; ++a) {
    h.normal[std::size_t(a)] = float(n[a] * scale);
    facing += n[a] * ray.world.direction[std::size_t(a)];
  }
  h.front_face = facing < 0;
  return h;
}

bool Collider::closestHit(const ChunkRay& ray, RayHit& hit) const noexcept {
  struct Closest {
    float best;
    int id = -1;
    float limit() const { return best; }
    bool operator()(int first, unsigned bits, const float* t) {
      for (; bits != 0; bits &= bits - 1) {
        const int i = std::countr_zero(bits);
        if (t[i] < best || id < 0) best = t[i], id = first + i;
      }
      return true;
    }
  } visit{ray.max_t};
  castRay(ray, visit);
  if (visit.id < 0) return false;
  hit = makeHit(ray, visit.id, visit.best);
  return true;
}

bool Collider::anyHit(const ChunkRay& ray) const noexcept {
  struct Any {
    float max_t;
    bool found = false;
    float limit() const { return max_t; }
    bool operator()(int, unsigned, const float*) {
      found = true;
      return false;
    }
  } visit{ray.max_t};
  castRay(ray, visit);
  return visit.found;
}

int Collider::allHits(const ChunkRay& ray, std::span<RayHit> out) const noexcept {
  struct All {
    explicit All(float limit_t) : max_t(limit_t) {}
    float max_t;
    int n = 0;
    std::uint64_t hits[mesher::kMaxTriangles];  // t bits above, id below: sorts by t, then id (24 KiB of stack)
    float limit() const { return max_t; }
    bool operator()(int first, unsigned bits, const float* t) {
      for (; bits != 0; bits &= bits - 1) {
        const int i = std::countr_zero(bits);
        hits[n++] = std::uint64_t(std::bit_cast<std::uint32_t>(t[i])) << 32 | std::uint32_t(first + i);
      }
      return true;
    }
  } visit(ray.max_t);
  castRay(ray, visit);
  std::sort(visit.hits, visit.hits + visit.n);
  const int written = std::min(visit.n, int(out.size()));
  for (int i = 0; i < written; ++i) {
    const std::uint64_t h = visit.hits[i];
    out[std::size_t(i)] = makeHit(ray, int(h & 0xFFFFFFFFu), std::bit_cast<float>(std::uint32_t(h >> 32)));
  }
  return visit.n;
}

}  // namespace vtp::physics
