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
#include <cstring>

#include "vtp/physics/collider.h"

namespace vtp::physics {

namespace {

// At most one leaf per triangle, and a collider holds one chunk's own triangles.
constexpr int kMaxLeaves = mesher::kMaxWideTriangles;

// The ray in 8 lanes, in Woop's permuted axes (kx, ky, kz).
struct RayLanes {
  __m256i origin_int[3];
  __m256 origin_frac[3];
  int axis[3];
  __m256 shear_x, shear_y, shear_z;

  explicit RayLanes(const ChunkRay& r) : axis{r.kx, r.ky, r.kz} {
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

// One grid axis of 8 vertices (3 * index in `idx3`) relative to the ray origin: vertex minus the origin's integer part
// is exact in int32, minus the fraction rounds once, so both chunks of a seam get the same float.
inline __m256 relative(const std::int16_t* positions, __m256i idx3, __m256i valid, int axis, __m256i oi, __m256 of) {
  const __m256i g = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), reinterpret_cast<const int*>(positions + axis),
                                                idx3, valid, 2);
  const __m256i v = _mm256_srai_epi32(_mm256_slli_epi32(g, 16), 16);
  return _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, oi)), of);
}

inline Sheared shear(const std::int16_t* positions, __m256i index, __m256i valid, const RayLanes& r) {
  const __m256i idx3 = _mm256_add_epi32(_mm256_add_epi32(index, index), index);
  const __m256 x = relative(positions, idx3, valid, r.axis[0], r.origin_int[0], r.origin_frac[0]);
  const __m256 y = relative(positions, idx3, valid, r.axis[1], r.origin_int[1], r.origin_frac[1]);
  const __m256 z = relative(positions, idx3, valid, r.axis[2], r.origin_int[2], r.origin_frac[2]);
  return {_mm256_sub_ps(x, _mm256_mul_ps(r.shear_x, z)), _mm256_sub_ps(y, _mm256_mul_ps(r.shear_y, z)),
          _mm256_mul_ps(r.shear_z, z)};
}

// a.x * b.y - a.y * b.x, lane by lane.
inline __m256 edge(const Sheared& a, const Sheared& b) {
  return _mm256_sub_ps(_mm256_mul_ps(a.x, b.y), _mm256_mul_ps(a.y, b.x));
}

// The same in double, for a lane where the float result is exactly zero.
inline float edgeExact(float ax, float ay, float bx, float by) {
  return float(double(ax) * double(by) - double(ay) * double(bx));
}

// Tests triangles [first, first + count) (count in 1..8): bit i of the result is set when triangle first + i is hit
// at t[i] in [0, limit]. `corners` are the three index arrays.
unsigned testBlock(const std::int16_t* positions, const std::uint16_t* const* corners, int first, int count,
                   const RayLanes& r, float limit, float* t_out) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i valid = _mm256_cmpgt_epi32(_mm256_set1_epi32(count), lane);
    const __m256i index_bits = _mm256_set1_epi32(0x7FFF);  // bit 15 is an edge flag
    auto indices = [&](int k) {
      const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(corners[k] + first));
      return _mm256_and_si256(_mm256_cvtepu16_epi32(raw), index_bits);
    };
    const Sheared a = shear(positions, indices(0), valid, r);
    const Sheared b = shear(positions, indices(1), valid, r);
    const Sheared cc = shear(positions, indices(2), valid, r);
    __m256 u = edge(cc, b), v = edge(a, cc), w = edge(b, a);
    const __m256 zero = _mm256_setzero_ps();
    const unsigned valid_bits = (1u << count) - 1;
    const unsigned exact = unsigned(_mm256_movemask_ps(_mm256_or_ps(
                               _mm256_or_ps(_mm256_cmp_ps(u, zero, _CMP_EQ_OQ), _mm256_cmp_ps(v, zero, _CMP_EQ_OQ)),
                               _mm256_cmp_ps(w, zero, _CMP_EQ_OQ)))) &
                           valid_bits;
    if (exact != 0) {
      alignas(32) float f[9][8];
      const __m256 in[9] = {a.x, a.y, b.x, b.y, cc.x, cc.y, u, v, w};
      for (int k = 0; k < 9; ++k) _mm256_store_ps(f[k], in[k]);
      for (unsigned bits = exact; bits != 0; bits &= bits - 1) {
        const int i = std::countr_zero(bits);
        f[6][i] = edgeExact(f[4][i], f[5][i], f[2][i], f[3][i]);  // U = C x B
        f[7][i] = edgeExact(f[0][i], f[1][i], f[4][i], f[5][i]);  // V = A x C
        f[8][i] = edgeExact(f[2][i], f[3][i], f[0][i], f[1][i]);  // W = B x A
      }
      u = _mm256_load_ps(f[6]);
      v = _mm256_load_ps(f[7]);
      w = _mm256_load_ps(f[8]);
    }
    const __m256 negative = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(u, zero, _CMP_LT_OQ), _mm256_cmp_ps(v, zero, _CMP_LT_OQ)),
                                         _mm256_cmp_ps(w, zero, _CMP_LT_OQ));
    const __m256 positive = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(u, zero, _CMP_GT_OQ), _mm256_cmp_ps(v, zero, _CMP_GT_OQ)),
                                         _mm256_cmp_ps(w, zero, _CMP_GT_OQ));
    const __m256 det = _mm256_add_ps(_mm256_add_ps(u, v), w);
    const __m256 big_t = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(u, a.z), _mm256_mul_ps(v, b.z)), _mm256_mul_ps(w, cc.z));
    const __m256 t = _mm256_div_ps(big_t, det);
    const __m256 in_range =
        _mm256_and_ps(_mm256_cmp_ps(t, zero, _CMP_GE_OQ), _mm256_cmp_ps(t, _mm256_set1_ps(limit), _CMP_LE_OQ));
    const __m256 hit = _mm256_andnot_ps(_mm256_and_ps(negative, positive),
                                        _mm256_and_ps(in_range, _mm256_cmp_ps(det, zero, _CMP_NEQ_OQ)));
    _mm256_storeu_ps(t_out, t);
    return unsigned(_mm256_movemask_ps(hit)) & valid_bits;
}

}  // namespace

template <class Visit>
void Collider::castRay(const ChunkRay& ray, Visit&& visit) const noexcept {
  if (m_triangles == 0) return;
  const RayLanes lanes(ray);
  const std::uint16_t* const corners[3] = {corner(0), corner(1), corner(2)};
  // Leaf boxes are grown by one grid unit, so float rounding in the slab test never drops a leaf the exact test hits.
  const __m256i one = _mm256_set1_epi32(1);
  __m256i oi[3];
  __m256 of[3], inv[3];
  for (int a = 0; a < 3; ++a) {
    oi[a] = _mm256_set1_epi32(ray.origin_int[std::size_t(a)]);
    of[a] = _mm256_set1_ps(ray.origin_frac[std::size_t(a)]);
    inv[a] = _mm256_set1_ps(ray.inv_direction[std::size_t(a)]);
  }
  // Entry t (non-negative float bits, which order like the floats) above, leaf below: one integer sort.
  std::uint64_t entries[kMaxLeaves];
  int n = 0;
  const int groups = groupCount();
  for (int g = 0; g < groups; ++g) {
    const std::int16_t* box = boxes() + 6 * kLeafGroup * g;
    __m256 t_near = _mm256_setzero_ps(), t_far = _mm256_set1_ps(ray.max_t);
    for (int a = 0; a < 3; ++a) {
      auto plane = [&](int k, __m256i slack) {
        const __m256i p = _mm256_cvtepi16_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(box + k * kLeafGroup)));
        const __m256 rel = _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_add_epi32(p, slack), oi[a])), of[a]);
        return _mm256_mul_ps(rel, inv[a]);
      };
      const __m256 t_lo = plane(a, _mm256_sub_epi32(_mm256_setzero_si256(), one)), t_hi = plane(3 + a, one);
      t_near = _mm256_max_ps(t_near, _mm256_min_ps(t_lo, t_hi));
      t_far = _mm256_min_ps(t_far, _mm256_max_ps(t_lo, t_hi));
    }
    unsigned bits = unsigned(_mm256_movemask_ps(_mm256_cmp_ps(t_near, t_far, _CMP_LE_OQ)));
    const int in_group = std::min(kLeafGroup, int(m_leaves) - kLeafGroup * g);
    bits &= (1u << in_group) - 1;  // lanes past the last leaf hold inverted boxes
    if (bits == 0) continue;
    alignas(32) std::uint32_t near_bits[8];
    _mm256_store_ps(reinterpret_cast<float*>(near_bits), t_near);
    for (; bits != 0; bits &= bits - 1) {
      const int lane = std::countr_zero(bits);
      entries[n++] = std::uint64_t(near_bits[lane]) << 32 | std::uint32_t(kLeafGroup * g + lane);
    }
  }
  if (n <= 16) {
    for (int i = 1; i < n; ++i)
      for (int j = i; j > 0 && entries[j] < entries[j - 1]; --j) std::swap(entries[j], entries[j - 1]);
  } else {
    std::sort(entries, entries + n);
  }
  alignas(32) float t[8];
  for (int e = 0; e < n; ++e) {
    float entry;
    const std::uint32_t entry_bits = std::uint32_t(entries[e] >> 32);
    std::memcpy(&entry, &entry_bits, sizeof entry);
    if (entry > visit.limit()) return;
    const int leaf = int(entries[e] & 0xFFFFFFFFu);
    const int last = leafStart()[leaf + 1];
    for (int first = leafStart()[leaf]; first < last; first += 8) {
      const unsigned hits = testBlock(positions(), corners, first, std::min(8, last - first), lanes, visit.limit(), t);
      if (hits != 0 && !visit(first, hits, t)) return;
    }
  }
}

RayHit Collider::makeHit(const ChunkRay& ray, int id, float t) const noexcept {
  RayHit h;
  h.t = t;
  h.triangle = id;
  h.material = materials()[id];
  for (int a = 0; a < 3; ++a) {
    h.point[std::size_t(a)] = ray.world.origin[std::size_t(a)] + h.t * ray.world.direction[std::size_t(a)];
  }
  // The normal from exact integer edges (the grid is isotropic, so it is the world normal too).
  const ColliderTriangle tri = triangle(id);
  const std::int64_t e1[3] = {tri.vertices[1].x - tri.vertices[0].x, tri.vertices[1].y - tri.vertices[0].y,
                              tri.vertices[1].z - tri.vertices[0].z};
  const std::int64_t e2[3] = {tri.vertices[2].x - tri.vertices[0].x, tri.vertices[2].y - tri.vertices[0].y,
                              tri.vertices[2].z - tri.vertices[0].z};
  const double n[3] = {double(e1[1] * e2[2] - e1[2] * e2[1]), double(e1[2] * e2[0] - e1[0] * e2[2]),
                       double(e1[0] * e2[1] - e1[1] * e2[0])};
  const double length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  double facing = 0;
  for (int a = 0; a < 3; ++a) {
    h.normal[std::size_t(a)] = length > 0 ? float(n[a] / length) : 0.0f;
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
    std::uint64_t hits[mesher::kMaxWideTriangles];  // t bits above, id below: sorts by t, then id
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
