// Box queries on a collider: 8 leaf boxes per SSE step (int16 compares on the grid, exact), then the triangles of an
// overlapped leaf 8 at a time: their corners in int32 lanes, min and max per axis, compared with the box (exact too),
// so the only branch per block is the loop over the hits it found.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <bit>
#include <limits>

#include "corner_load.h"
#include "vtp/physics/collider.h"

namespace vtp::physics {

namespace {

// For each 8-bit mask, a byte shuffle that moves the 16-bit lanes named by its set bits to the front, in order.
constexpr auto kCompress = [] {
  std::array<std::array<std::uint8_t, 16>, 256> table{};
  for (unsigned mask = 0; mask < 256; ++mask) {
    int out = 0;
    for (int lane = 0; lane < 8; ++lane) {
      if ((mask >> lane & 1u) == 0) continue;
      table[mask][std::size_t(2 * out)] = std::uint8_t(2 * lane);
      table[mask][std::size_t(2 * out + 1)] = std::uint8_t(2 * lane + 1);
      ++out;
    }
    for (; out < 8; ++out) table[mask][std::size_t(2 * out)] = table[mask][std::size_t(2 * out + 1)] = 0x80;
  }
  return table;
}();

// Appends ids first + lane for the set bits of `lanes` (8 bits) at ids[found...], as far as `ids` has room; returns
// the new count. With room for 8 more, one shuffle and one store.
int appendIds(std::span<std::uint16_t> ids, int found, int first, unsigned lanes) {
  if (std::size_t(found) + kTriangleBlock <= ids.size()) {
    const __m128i all = _mm_add_epi16(_mm_set1_epi16(std::int16_t(first)), _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7));
    const __m128i pick = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kCompress[lanes].data()));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(ids.data() + found), _mm_shuffle_epi8(all, pick));
    return found + std::popcount(lanes);
  }
  for (; lanes != 0; lanes &= lanes - 1, ++found) {
    if (std::size_t(found) < ids.size()) ids[std::size_t(found)] = std::uint16_t(first + std::countr_zero(lanes));
  }
  return found;
}

// Writes the three corners of each triangle in `lanes`, scaled to world units, at vertices[3 (found + i)...] for the
// i-th set lane, for the ids that fit in `id_room`.
void appendVertices(std::span<std::array<float, 3>> vertices, std::size_t id_room, int found, const Corner (&c)[3],
                    float scale, unsigned lanes) {
  alignas(32) float xyz[3][3][8];  // corner, axis, lane
  const __m256 s = _mm256_set1_ps(scale);
  for (int k = 0; k < 3; ++k) {
    for (int a = 0; a < 3; ++a) _mm256_store_ps(xyz[k][a], _mm256_mul_ps(_mm256_cvtepi32_ps(c[k].axis[a]), s));
  }
  for (; lanes != 0; lanes &= lanes - 1, ++found) {
    const int lane = std::countr_zero(lanes);
    if (std::size_t(found) >= id_room || std::size_t(3 * found + 2) >= vertices.size()) return;
    for (int k = 0; k < 3; ++k) {
      vertices[std::size_t(3 * found + k)] = {xyz[k][0][lane], xyz[k][1][lane], xyz[k][2][lane]};
    }
  }
}

}  // namespace

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
    __m128i leaf_lo[3], leaf_hi[3];
    __m128i miss = _mm_setzero_si128();
    for (int a = 0; a < 3; ++a) {
      leaf_lo[a] = _mm_load_si128(reinterpret_cast<const __m128i*>(b + a * kLeafGroup));
      leaf_hi[a] = _mm_load_si128(reinterpret_cast<const __m128i*>(b + (3 + a) * kLeafGroup));
      miss = _mm_or_si128(miss,
                          _mm_or_si128(_mm_cmpgt_epi16(leaf_lo[a], hi8[a]), _mm_cmpgt_epi16(lo8[a], leaf_hi[a])));
    }
    // Two mask bits per 16-bit lane; the even ones name the leaves. Lanes past the last leaf hold inverted boxes,
    // which a query clamped to the int16 range can still "overlap": mask them by count.
    const int valid = std::min(kLeafGroup, int(m_leaves) - kLeafGroup * g);
    unsigned overlap = ~unsigned(_mm_movemask_epi8(miss)) & 0x5555u & ((1u << (2 * valid)) - 1);
    if (overlap == 0) continue;  // most groups, for a small box: nothing more to compute
    // A leaf whose box lies inside the query box: every one of its triangles overlaps, no test needed (ids only).
    unsigned inside = 0;
    if (!want_vertices) {
      __m128i sticks_out = _mm_setzero_si128();
      for (int a = 0; a < 3; ++a) {
        sticks_out = _mm_or_si128(sticks_out, _mm_or_si128(_mm_cmpgt_epi16(lo8[a], leaf_lo[a]),
                                                           _mm_cmpgt_epi16(leaf_hi[a], hi8[a])));
      }
      inside = ~unsigned(_mm_movemask_epi8(sticks_out)) & overlap;
    }
    for (; overlap != 0; overlap &= overlap - 1) {
      const int lane_bit = std::countr_zero(overlap);
      const int leaf = kLeafGroup * g + lane_bit / 2;
      const int last = leafStart()[leaf + 1];
      for (int t = leafStart()[leaf]; t < last; t += kTriangleBlock) {
        const unsigned block = (1u << std::min(kTriangleBlock, last - t)) - 1;
        if (inside & (1u << lane_bit)) {
          found = appendIds(ids, found, t, block);
          continue;
        }
        const Corner c[3] = {loadCorner(pos, corners[0], t), loadCorner(pos, corners[1], t),
                             loadCorner(pos, corners[2], t)};
        __m256i out = _mm256_setzero_si256();
        for (int a = 0; a < 3; ++a) {
          const __m256i mn = _mm256_min_epi32(c[0].axis[a], _mm256_min_epi32(c[1].axis[a], c[2].axis[a]));
          const __m256i mx = _mm256_max_epi32(c[0].axis[a], _mm256_max_epi32(c[1].axis[a], c[2].axis[a]));
          out = _mm256_or_si256(out, _mm256_or_si256(_mm256_cmpgt_epi32(mn, hi32[a]), _mm256_cmpgt_epi32(lo32[a], mx)));
        }
        const unsigned hits = ~unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(out))) & block;
        if (hits == 0) continue;
        if (want_vertices) appendVertices(vertices, ids.size(), found, c, scale, hits);
        found = appendIds(ids, found, t, hits);
      }
    }
  }
  return found;
}

}  // namespace vtp::physics
