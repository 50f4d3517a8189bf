// Box queries on a collider: 8 leaf boxes per SSE step (int16 compares on the grid, exact), then each triangle of an
// overlapped leaf: its three vertices in one register each, min and max, compared with the box (exact too).
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <limits>

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
  // Per triangle: lanes x, y, z of the vertices' min (compared with the box max) and max (with the box min).
  const __m128i box_lo = _mm_setr_epi16(clamp16(box.min[0]), clamp16(box.min[1]), clamp16(box.min[2]), 0, 0, 0, 0, 0);
  const __m128i box_hi = _mm_setr_epi16(clamp16(box.max[0]), clamp16(box.max[1]), clamp16(box.max[2]), 0, 0, 0, 0, 0);
  const float scale = float(voxel_size / kGridScale);
  const std::int16_t* pos = positions();
  const std::uint16_t* const corners[3] = {corner(0), corner(1), corner(2)};
  int found = 0;
  const int groups = groupCount();
  for (int g = 0; g < groups; ++g) {
    const std::int16_t* b = boxes() + 6 * kLeafGroup * g;
    __m128i miss = _mm_setzero_si128();
    for (int a = 0; a < 3; ++a) {
      const __m128i leaf_lo = _mm_load_si128(reinterpret_cast<const __m128i*>(b + a * kLeafGroup));
      const __m128i leaf_hi = _mm_load_si128(reinterpret_cast<const __m128i*>(b + (3 + a) * kLeafGroup));
      miss = _mm_or_si128(miss, _mm_or_si128(_mm_cmpgt_epi16(leaf_lo, hi8[a]), _mm_cmpgt_epi16(lo8[a], leaf_hi)));
    }
    // Two mask bits per 16-bit lane; the even ones name the leaves. Empty lanes hold inverted boxes and always miss.
    unsigned overlap = ~unsigned(_mm_movemask_epi8(miss)) & 0x5555u;
    for (; overlap != 0; overlap &= overlap - 1) {
      const int leaf = kLeafGroup * g + std::countr_zero(overlap) / 2;
      const int last = leafStart()[leaf + 1];
      for (int t = leafStart()[leaf]; t < last; ++t) {
        __m128i v[3];
        for (int k = 0; k < 3; ++k) {
          v[k] = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(pos + 3 * (corners[k][t] & 0x7FFF)));
        }
        const __m128i mn = _mm_min_epi16(v[0], _mm_min_epi16(v[1], v[2]));
        const __m128i mx = _mm_max_epi16(v[0], _mm_max_epi16(v[1], v[2]));
        const __m128i out = _mm_or_si128(_mm_cmpgt_epi16(mn, box_hi), _mm_cmpgt_epi16(box_lo, mx));
        if ((_mm_movemask_epi8(out) & 0x3F) != 0) continue;
        if (found < int(ids.size())) {
          ids[std::size_t(found)] = std::uint16_t(t);
          if (std::size_t(3 * found + 2) < vertices.size()) {
            for (int k = 0; k < 3; ++k) {
              const std::int16_t* p = pos + 3 * (corners[k][t] & 0x7FFF);
              vertices[std::size_t(3 * found + k)] = {p[0] * scale, p[1] * scale, p[2] * scale};
            }
          }
        }
        ++found;
      }
    }
  }
  return found;
}

}  // namespace vtp::physics
