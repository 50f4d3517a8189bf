// Box queries on a collider: 8 leaf boxes per SSE step (int16 compares on the grid, exact), then the triangles of an
// overlapped leaf 8 at a time: their corners in int32 lanes, min and max per axis, compared with the box (exact too),
// so the only branch per block is the loop over the hits it found.
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <limits>

#include "corner_load.h"
#include "vtp/physics/collider.h"

namespace vtp::physics {

int Collider::gather(const GridBox& box, std::span<std::uint16_t> ids, std::span<std::array<float, 3>> vertices,
                     double voxel_size) const noexcept {
  // Outside the collider's bounds: nothing (this also keeps the clamped int16 box below exact).
  for (int a = 0; a < 3; ++a) {
    if (box.min[std::size_t(a)] > m_bounds[std::size_t(3 + a)] || box.max[std::size_t(a)] < m_bounds[std::size_t(a)] ||
        box.min[std::size_t(a)] > box.max[std::size_t(a)]) {
      return 0;
    }
  }
  auto clamp16 = [](std::int32_t v) {
    return std::int16_t(std::clamp<std::int32_t>(v, std::numeric_limits<std::int16_t>::min(),
                                                 std::numeric_limits<std::int16_t>::max()));
  };
  const __m128i lo8[3] = {_mm_set1_epi16(clamp16(box.min[0])), _mm_set1_epi16(clamp16(box.min[1])),
                          _mm_set1_epi16(clamp16(box.min[2]))};
  const __m128i hi8[3] = {_mm_set1_epi16(clamp16(box.max[0])), _mm_set1_epi16(clamp16(box.max[1])),
                          _mm_set1_epi16(clamp16(box.max[2]))};
  __m256i lo32[3], hi32[3];
  for (int a = 0; a < 3; ++a) {
    lo32[a] = _mm256_set1_epi32(clamp16(box.min[std::size_t(a)]));
    hi32[a] = _mm256_set1_epi32(clamp16(box.max[std::size_t(a)]));
  }
  const float scale = float(voxel_size / kGridScale);
  const std::int16_t* pos = positions();
  const std::uint16_t* const corners[3] = {corner(0), corner(1), corner(2)};
  const bool want_vertices = !vertices.empty();
  int found = 0;
  const int groups = groupCount();
  for (int g = 0; g < groups; ++g) {
    const std::int16_t* b = boxes() + 6 * kLeafGroup * g;
    __m128i miss = _mm_setzero_si128(), sticks_out = _mm_setzero_si128();
    for (int a = 0; a < 3; ++a) {
      const __m128i leaf_lo = _mm_load_si128(reinterpret_cast<const __m128i*>(b + a * kLeafGroup));
      const __m128i leaf_hi = _mm_load_si128(reinterpret_cast<const __m128i*>(b + (3 + a) * kLeafGroup));
      miss = _mm_or_si128(miss, _mm_or_si128(_mm_cmpgt_epi16(leaf_lo, hi8[a]), _mm_cmpgt_epi16(lo8[a], leaf_hi)));
      sticks_out =
          _mm_or_si128(sticks_out, _mm_or_si128(_mm_cmpgt_epi16(lo8[a], leaf_lo), _mm_cmpgt_epi16(leaf_hi, hi8[a])));
    }
    // Two mask bits per 16-bit lane; the even ones name the leaves. Lanes past the last leaf hold inverted boxes,
    // which a query clamped to the int16 range can still "overlap": mask them by count.
    const int valid = std::min(kLeafGroup, int(m_leaves) - kLeafGroup * g);
    unsigned overlap = ~unsigned(_mm_movemask_epi8(miss)) & 0x5555u & ((1u << (2 * valid)) - 1);
    // A leaf whose box lies inside the query box: every one of its triangles overlaps, no test needed (ids only).
    const unsigned inside = want_vertices ? 0u : ~unsigned(_mm_movemask_epi8(sticks_out)) & overlap;
    for (; overlap != 0; overlap &= overlap - 1) {
      const int lane_bit = std::countr_zero(overlap);
      const int leaf = kLeafGroup * g + lane_bit / 2;
      const int last = leafStart()[leaf + 1];
      if (inside & (1u << lane_bit)) {
        for (int t = leafStart()[leaf]; t < last; ++t, ++found) {
          if (found < int(ids.size())) ids[std::size_t(found)] = std::uint16_t(t);
        }
        continue;
      }
      for (int t = leafStart()[leaf]; t < last; t += 8) {
        const int count = std::min(8, last - t);
        const Corner c[3] = {loadCorner(pos, corners[0], t, count), loadCorner(pos, corners[1], t, count),
                             loadCorner(pos, corners[2], t, count)};
        __m256i out = _mm256_setzero_si256();
        for (int a = 0; a < 3; ++a) {
          const __m256i mn = _mm256_min_epi32(c[0].axis[a], _mm256_min_epi32(c[1].axis[a], c[2].axis[a]));
          const __m256i mx = _mm256_max_epi32(c[0].axis[a], _mm256_max_epi32(c[1].axis[a], c[2].axis[a]));
          out = _mm256_or_si256(out, _mm256_or_si256(_mm256_cmpgt_epi32(mn, hi32[a]), _mm256_cmpgt_epi32(lo32[a], mx)));
        }
        unsigned hits = ~unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(out))) & ((1u << count) - 1);
        if (hits == 0) continue;
        alignas(32) std::int32_t xyz[3][3][8];  // corner, axis, lane (only when vertices are wanted)
        if (want_vertices) {
          for (int k = 0; k < 3; ++k)
            for (int a = 0; a < 3; ++a) _mm256_store_si256(reinterpret_cast<__m256i*>(xyz[k][a]), c[k].axis[a]);
        }
        for (; hits != 0; hits &= hits - 1) {
          const int lane = std::countr_zero(hits);
          if (found < int(ids.size())) {
            ids[std::size_t(found)] = std::uint16_t(t + lane);
            if (want_vertices && std::size_t(3 * found + 2) < vertices.size()) {
              for (int k = 0; k < 3; ++k) {
                vertices[std::size_t(3 * found + k)] = {float(xyz[k][0][lane]) * scale, float(xyz[k][1][lane]) * scale,
                                                        float(xyz[k][2][lane]) * scale};
              }
            }
          }
          ++found;
        }
      }
    }
  }
  return found;
}

}  // namespace vtp::physics
