// Box queries on a collider: 8 leaf boxes per SSE step (int16 compares on the grid, exact), then the triangles of an
// overlapped leaf 8 at a time: their corners in int32 lanes, min and max per axis, compared with the box (exact too),
// so the only branch per block is the loop over the hits it found.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <bit>
#include <limits>

#include "collider/corner_load.h"
#include "collider/leaf_boxes.h"
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
// i-th set lane, for the ids that fit in `id_room`. With room for 8 more triangles there is no branch on the lanes:
// the 8 lanes are transposed to one triangle per pair of 128-bit halves (8 of its 9 floats; the ninth stored alone)
// and every lane is written, in order, to the slot of its rank among the set lanes. A clear lane's slot is the next
// set lane's, which overwrites it, or lies past the count. (Compressing the set lanes first cost 9 cross-lane
// permutes a block.)
void appendVertices(std::span<std::array<float, 3>> vertices, std::size_t id_room, int found, const Corner (&c)[3],
                    float scale, unsigned lanes) {
  static_assert(sizeof(std::array<float, 3>) == 3 * sizeof(float));
  const __m256 s = _mm256_set1_ps(scale);
  __m256 v[9];  // corner k, axis a at 3 k + a; one lane per triangle
  for (int k = 0; k < 3; ++k) {
    for (int a = 0; a < 3; ++a) v[3 * k + a] = _mm256_mul_ps(_mm256_cvtepi32_ps(c[k].axis[a]), s);
  }
  const auto at = std::size_t(found);
  if (at + kTriangleBlock <= id_room && 3 * (at + kTriangleBlock) <= vertices.size()) {
    // 4x4 transposes within each 128-bit half: u[i] holds floats 4 (i / 4) .. + 3 of triangle i % 4 in its low half
    // and of triangle i % 4 + 4 in its high half, stored as two 16-byte halves per triangle. A full 8x8 transpose
    // takes 8 more cross-lane shuffles; this form took 0.97 of its time (data/bench/README.md).
    __m256 u[8];
    for (int h = 0; h < 8; h += 4) {
      const __m256 t0 = _mm256_unpacklo_ps(v[h], v[h + 1]), t1 = _mm256_unpackhi_ps(v[h], v[h + 1]);
      const __m256 t2 = _mm256_unpacklo_ps(v[h + 2], v[h + 3]), t3 = _mm256_unpackhi_ps(v[h + 2], v[h + 3]);
      u[h] = _mm256_shuffle_ps(t0, t2, 0x44);
      u[h + 1] = _mm256_shuffle_ps(t0, t2, 0xEE);
      u[h + 2] = _mm256_shuffle_ps(t1, t3, 0x44);
      u[h + 3] = _mm256_shuffle_ps(t1, t3, 0xEE);
    }
    alignas(32) float ninth[8];
    _mm256_store_ps(ninth, v[8]);
    float* out = vertices[3 * at].data();
    unsigned rank = 0;
    for (int t = 0; t < 8; ++t) {
      float* o = out + 9 * rank;
      const __m256 first = u[t & 3], second = u[(t & 3) + 4];
      _mm_storeu_ps(o, t < 4 ? _mm256_castps256_ps128(first) : _mm256_extractf128_ps(first, 1));
      _mm_storeu_ps(o + 4, t < 4 ? _mm256_castps256_ps128(second) : _mm256_extractf128_ps(second, 1));
      o[8] = ninth[t];
      rank += (lanes >> t) & 1u;
    }
    return;
  }
  alignas(32) float xyz[9][8];
  for (int i = 0; i < 9; ++i) _mm256_store_ps(xyz[i], v[i]);
  for (; lanes != 0; lanes &= lanes - 1, ++found) {
    const int lane = std::countr_zero(lanes);
    if (std::size_t(found) >= id_room || std::size_t(3 * found + 2) >= vertices.size()) return;
    for (int k = 0; k < 3; ++k) {
      vertices[std::size_t(3 * found + k)] = {xyz[3 * k][lane], xyz[3 * k + 1][lane], xyz[3 * k + 2][lane]};
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
  std::int16_t lo[3], hi[3];
  __m128i lo8[3], hi8[3];
  __m256i lo32[3], hi32[3];
  for (int a = 0; a < 3; ++a) {
    lo[a] = clamp16(box.min[std::size_t(a)]);
    hi[a] = clamp16(box.max[std::size_t(a)]);
    lo8[a] = _mm_set1_epi16(lo[a]);
    hi8[a] = _mm_set1_epi16(hi[a]);
    lo32[a] = _mm256_set1_epi32(lo[a]);
    hi32[a] = _mm256_set1_epi32(hi[a]);
  }
  const float scale = float(voxel_size / kGridScale);
  const std::int16_t* pos = positions();
  const std::uint16_t* const corners[3] = {corner(0), corner(1), corner(2)};
  const bool want_vertices = !vertices.empty();
  int found = 0;
  // A leaf whose box lies inside the query box: every one of its triangles overlaps, no test needed (ids only). Asked
  // leaf by leaf, and only for a box at least 4 voxels wide on every axis: a smaller one rarely holds a leaf (0.01 a
  // query for 2-voxel boxes on the default world), so the question would cost more than it saves.
  const bool ask_inside = !want_vertices && hi[0] - lo[0] >= 4 * kGridScale && hi[1] - lo[1] >= 4 * kGridScale &&
                          hi[2] - lo[2] >= 4 * kGridScale;
  auto inside = [&](int leaf) {
    const GridBox b = leafBounds(leaf);
    bool in = true;
    for (std::size_t a = 0; a < 3; ++a) in = in & (b.min[a] >= lo[a]) & (b.max[a] <= hi[a]);  // no branch per plane
    return in;
  };
  // Up to 8 groups (64 leaves) a round: first every leaf box against the query box, a fixed number of steps with no
  // branch on what they find, the overlap bits side by side in one word; then the overlapping leaves, one set bit at
  // a time. Which leaves overlap is data: a branch per group on it mispredicted about once a query.
  const int groups = groupCount();
  for (int round = 0; round < groups; round += 8) {
    std::uint64_t overlap = overlappingLeaves(boxes() + 6 * kLeafGroup * round, std::min(8, groups - round),
                                              int(m_leaves) - kLeafGroup * round, lo8, hi8);
    for (; overlap != 0; overlap &= overlap - 1) {
      const int leaf = kLeafGroup * round + std::countr_zero(overlap);
      const int last = leafStart()[leaf + 1];
      const bool all = ask_inside && inside(leaf);
      for (int t = leafStart()[leaf]; t < last; t += kTriangleBlock) {
        const unsigned block = (1u << std::min(kTriangleBlock, last - t)) - 1;
        if (all) {
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
        if (want_vertices) appendVertices(vertices, ids.size(), found, c, scale, hits);  // no branch on `hits` either
        found = appendIds(ids, found, t, hits);  // no branch on `hits` (with room for 8 more ids)
      }
    }
  }
  return found;
}

}  // namespace vtp::physics
