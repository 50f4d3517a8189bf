// Surface nets over one chunk box, with bit-mask edge detection (whole rows of voxels per operation) and exact
// occupancy-weighted vertices. The rules are stated in surface_mesher.h; this file is about doing them fast
// in these steps:
//   0. the fast path: a box whose voxels from (1, 1, 1) on are all equal (all air, water or one solid) has no surface;
//      checked with two vector operations per 16 voxels before anything else;
//   1. weights: one AVX2 pass turns voxels into weights e (occupancy if solid, else 0) and their sign bits (e >= 128
//      is inside), and detects the other boxes that are all outside or all inside (no triangles) on the way;
//   2. rows: the inside bits of each (y, z) row of the box, 16 rows per vector;
//   3. edges and cells: XORs of neighbouring rows give the active edges of a whole row at once; ORs of shifted edge
//      rows give the cells whose vertices the quads need, packed into one bit per box voxel;
//   4. vertices: the needed cells go to a list (bit_list.h), then each averages the crossings of its active edges,
//      in SIMD from a per-pattern table (cell_table.h), two cells per step; cells with an edge between two partly
//      filled voxels get its linear crossing as a correction to those sums;
//   5. quads: per axis the active edges go to a list, then each joins its 4 cells' vertices, split along the shorter
//      diagonal (quad_split.h), two quads per step.
// Everything is specialised on the apron at compile time, so every stride is a constant. Which end of an edge is
// inside is a coin toss a branch predictor cannot learn, so it only ever selects data, never a branch.
#include "vtp/mesher/surface_mesher.h"

#include <immintrin.h>

#include <array>
#include <bit>
#include <cstring>

#include "bit_list.h"
#include "cell_table.h"
#include "quad_split.h"

namespace vtp::mesher {

namespace {

constexpr int kMaxSide = boxSide(kWideApron);
constexpr int kMaxVolume = boxVolume(kWideApron);
// Output buffer sizes: room for the most vertices and triangles plus slack for the loops that work in pairs, whose
// last step may write one vertex or quad past the end (an odd one's twin); 16-byte index stores also reach 2 indices
// past their quad.
constexpr std::size_t kVertexCapacity = std::size_t(kMaxWideVertices) + 1;
constexpr std::size_t kIndexCapacity = 3 * std::size_t(kMaxWideTriangles) + 8;
constexpr std::size_t kMaterialCapacity = std::size_t(kMaxWideTriangles) + 2;

// Scratch memory for one box. Row arrays hold the plane's rows (at most 12 x 12) plus room for 16-row vector loads at
// offsets up to side + 1.
constexpr int kRowSlots = 176;

// The inside bits of the box, one per voxel in box order, with room for the 16-byte loads of step 2.
constexpr int kInsideBitBytes = (kMaxSide * kMaxSide * (kMaxSide + 1) + 7) / 8 + 16;

// The needed cells' bits: (12 x 12 + 16) rows of 12 bits, the packing's last 16 rows included.
constexpr int kCellBitWords = ((kMaxSide * kMaxSide + 16) * kMaxSide + 63) / 64 + 1;

struct MeshScratch {
  alignas(32) std::uint8_t weight[kMaxVolume];
  alignas(32) std::uint8_t inside_bits[kInsideBitBytes];  // bit i: box voxel i is inside (weight >= 128)
  alignas(32) std::uint16_t inside_rows[kRowSlots];   // row y + side z, bit x: voxel (x, y, z) is inside
  alignas(32) std::uint16_t edge_rows[3][kRowSlots];  // bit x: the edge from (x, y, z) along the axis is active
  alignas(32) std::uint8_t owned_edges[3][kRowSlots];  // the same rows' owned x bits: bit i is x = apron + i
  alignas(32) std::uint16_t cell_parts[3][kRowSlots];  // per edge row, the cells it needs in rows r, r-1, r-side
  // Bit x + side y + side^2 z: cell (x, y, z) has a vertex some quad uses (the cells' rows packed like inside_bits).
  alignas(32) std::uint64_t cell_bits[kCellBitWords];
  // Per needed cell (others stale), its vertex with the vertex index in the pad lane: a quad corner is one load.
  std::uint64_t cell_record[kMaxVolume];
  std::uint16_t list[kMaxVolume + kBitListSlack];  // the needed cells, then one axis' active edges, as box indices
};

// For each row, the x bits whose edges are meshed: lower voxels in [1, side - 1) on every axis; 0 for other rows.
template <int kSide>
constexpr std::array<std::uint16_t, kRowSlots> makeEdgeMasks() {
  std::array<std::uint16_t, kRowSlots> masks{};
  for (int z = 1; z < kSide - 1; ++z) {
    for (int y = 1; y < kSide - 1; ++y) {
      masks[std::size_t(y + kSide * z)] = std::uint16_t(((1u << (kSide - 1)) - 1) & ~1u);
    }
  }
  return masks;
}
template <int kSide>
alignas(32) constexpr std::array<std::uint16_t, kRowSlots> kEdgeMasks = makeEdgeMasks<kSide>();

// The fast path: whether every voxel from box voxel (1, 1, 1) on (in box order) is equal (all air, all water, all of
// one solid). Every meshed edge has both ends there (lower voxel >= 1 on every axis, upper voxel after it), so such a
// box has no active meshed edge and therefore no triangles and no vertices, as the full path would find; the voxels
// before (1, 1, 1) are ends of no meshed edge. The test starts a little earlier, on a 32-byte boundary of the box, so
// the loads of an aligned box do not straddle cache lines. One XOR and one OR per 16 voxels and a single test at the
// end (the last load overlaps the one before it); a mixed box costs about 1% of meshing it.
template <int kApronSize>
bool noMeshedEdge(const terrain::Voxel* box) {
  constexpr int kSide = boxSide(kApronSize);
  constexpr int kStart = (1 + kSide + kSide * kSide) * int(sizeof(terrain::Voxel)) / 32 * 32;  // bytes
  std::uint16_t first;
  std::memcpy(&first, box + boxVolume(kApronSize) - 1, sizeof first);
  const __m256i ref = _mm256_set1_epi16(short(first));
  const auto* bytes = reinterpret_cast<const unsigned char*>(box) + kStart;
  constexpr int size = boxVolume(kApronSize) * int(sizeof(terrain::Voxel)) - kStart;  // >= 1808
  auto diff = [&](int at) {
    return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes + at)), ref);
  };
  __m256i d0 = diff(size - 32), d1 = _mm256_setzero_si256();
#pragma GCC unroll 64
  for (int i = 0; i + 64 <= size; i += 64) {
    d0 = _mm256_or_si256(d0, diff(i));
    d1 = _mm256_or_si256(d1, diff(i + 32));
  }
  constexpr int tail = size / 64 * 64;
  if constexpr (tail + 32 <= size) d1 = _mm256_or_si256(d1, diff(tail));
  d0 = _mm256_or_si256(d0, d1);
  return _mm256_testz_si256(d0, d0);
}

// Step 1: weights, their sign bits (the inside bits), and whether the box has both an inside voxel (some weight >=
// 128) and an outside one. 32 voxels per step; the last step overlaps the one before it when the volume is not a
// multiple of 32 (it rewrites the same weights and bits), so there is no scalar tail.
template <int kVolume>
bool computeWeights(const terrain::Voxel* box, std::uint8_t* weight, std::uint8_t* inside_bits) {
  static_assert(kVolume % 8 == 0 && kVolume >= 32);  // each step's bits start on a byte
  const __m256i low_bits = _mm256_set1_epi16(0x00FE);
  __m256i any = _mm256_setzero_si256(), all = _mm256_set1_epi8(-1);
  auto step = [&](const terrain::Voxel* voxels, std::uint8_t* weights, std::uint8_t* bytes) {
    // Voxels as u16 lanes: material in the low byte, occupancy in the high byte. Material >= 2 <=> (v & 0xFE) != 0,
    // and that value is never negative, so psignw keeps the occupancy of a solid and zeroes the others.
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(voxels));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(voxels + 16));
    const __m256i wa = _mm256_sign_epi16(_mm256_srli_epi16(a, 8), _mm256_and_si256(a, low_bits));
    const __m256i wb = _mm256_sign_epi16(_mm256_srli_epi16(b, 8), _mm256_and_si256(b, low_bits));
    // packus interleaves 128-bit lanes; the permute restores voxel order.
    const __m256i w = _mm256_permute4x64_epi64(_mm256_packus_epi16(wa, wb), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(weights), w);
    const std::uint32_t bits = std::uint32_t(_mm256_movemask_epi8(w));
    std::memcpy(bytes, &bits, sizeof bits);
    any = _mm256_or_si256(any, w);
    all = _mm256_and_si256(all, w);
  };
  constexpr int kSteps = kVolume / 32;
  for (int k = 0; k < kSteps; ++k) step(box + 32 * k, weight + 32 * k, inside_bits + 4 * k);
  if constexpr (kVolume % 32 != 0) step(box + kVolume - 32, weight + kVolume - 32, inside_bits + (kVolume - 32) / 8);
  const bool some_inside = _mm256_movemask_epi8(any) != 0;
  const bool some_outside = unsigned(_mm256_movemask_epi8(all)) != 0xFFFFFFFFu;
  return some_inside && some_outside;
}

// Step 4, per cell: what the linear crossings (the header's crossing rule) of the edges whose ends are both partly
// filled add to the sums of cellSums, in its lane layout. `pairs` holds each edge's two corner weights as one 16-bit
// lane (lower corner in the low byte; edges 0..7 in lanes 0..7, 8..11 in lanes 8..11, lanes 12..15 zero). Every lane
// is computed and the others masked off. The quotient q = 128 (2 e_in - 255) / d, d = e_in - e_out <= 253, is
// never within 1/506 of a half-integer (that would need 256 | d); a reciprocal estimate with one Newton step is within
// 1e-6 relative, so rounding it gives the rule's integer on any x86-64-v3 CPU, whatever its rcpps bits. The rounding
// is explicit (not MXCSR's mode, which a host thread may have changed), so seams stay bit-identical across threads.
inline __m256i linearCorrection(__m256i pairs) {
  const __m256i lo = _mm256_and_si256(pairs, _mm256_set1_epi16(0xFF)), hi = _mm256_srli_epi16(pairs, 8);
  const __m256i e_in = _mm256_max_epi16(lo, hi), e_out = _mm256_min_epi16(lo, hi);
  // Active with both ends partly filled: e_in - 128 and e_out - 1 both in 0..126 (as unsigned, so below 0 is huge).
  const __m256i worst = _mm256_max_epu16(_mm256_sub_epi16(e_in, _mm256_set1_epi16(128)),
                                         _mm256_sub_epi16(e_out, _mm256_set1_epi16(1)));
  const __m256i use = _mm256_cmpeq_epi16(_mm256_min_epu16(worst, _mm256_set1_epi16(126)), worst);
  // t = 128 (2 e_in - 255) / (e_in - e_out), rounded, in 32-bit lanes: unpacking with zeros puts lanes 0..3 and 8..11
  // in one vector and 4..7 and 12..15 in the other, and packs_epi32 puts them back. Where t is used it lies in
  // 1.008..255.0, so it needs no clamp; the divisor is kept >= 1 so no lane divides by zero.
  const __m256i numerator =
      _mm256_slli_epi16(_mm256_sub_epi16(_mm256_add_epi16(e_in, e_in), _mm256_set1_epi16(255)), 7);
  const __m256i divisor = _mm256_max_epi16(_mm256_sub_epi16(e_in, e_out), _mm256_set1_epi16(1));
  const __m256i zero = _mm256_setzero_si256();
  auto quotient = [](__m256i n, __m256i d) {  // 8 lanes, rounded to nearest
    const __m256 df = _mm256_cvtepi32_ps(d);
    const __m256 estimate = _mm256_rcp_ps(df);
    const __m256 inverse = _mm256_mul_ps(estimate, _mm256_fnmadd_ps(df, estimate, _mm256_set1_ps(2.0f)));
    const __m256 q = _mm256_mul_ps(_mm256_cvtepi32_ps(n), inverse);
    return _mm256_cvttps_epi32(_mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  };
  const __m256i t = _mm256_packs_epi32(
      quotient(_mm256_unpacklo_epi16(numerator, zero), _mm256_unpacklo_epi16(divisor, zero)),
      quotient(_mm256_unpackhi_epi16(numerator, zero), _mm256_unpackhi_epi16(divisor, zero)));
  // Less the column rule's crossing, in 1/65280 voxel: 255 t - 128 (2 (e_in + e_out) - 255), signed from the lower
  // corner's side (+ when it is the inside end, - when the upper is); both parts fit 16 bits, so each is one pmaddwd
  // that also adds the lanes in pairs: (x, x, y, y | z, z, 0, 0), as cellSums lays out its sums.
  const __m256i sum = _mm256_add_epi16(e_in, e_out);
  const __m256i column = _mm256_sub_epi16(_mm256_add_epi16(sum, sum), _mm256_set1_epi16(255));
  const __m256i lo_side = _mm256_sub_epi16(_mm256_add_epi16(lo, lo), _mm256_set1_epi16(255));  // > 0 iff lo inside
  const __m256i linear = _mm256_and_si256(_mm256_sign_epi16(t, lo_side), use);
  const __m256i sum_rule = _mm256_and_si256(_mm256_sign_epi16(column, lo_side), use);
  return _mm256_sub_epi32(_mm256_madd_epi16(linear, _mm256_set1_epi16(255)),
                          _mm256_madd_epi16(sum_rule, _mm256_set1_epi16(128)));
}

// Step 4, per cell: the crossing sums of one cell and its pattern. The 8 corner weights go into one register, in
// corner order, so their sign bits (one pmovmskb) are the cell's inside/outside pattern; a byte shuffle lays out each
// edge's two corners, pmaddubsw with the pattern's signs gives the signed weight pairs and pmaddwd adds them in twos:
// 32-bit lanes (x, x, y, y | z, z, 0, 0), whose sums per axis are the signed weight sums of the vertex mean. Cells
// with a partly filled corner on each side (128..254 and 1..127) add the linear crossings' corrections: 45% of the
// surface cells of the default world. Skipping the rest kept meshing that world at 64.7 M instructions against
// 75.0 M when every cell paid for the correction (46.9 M with the sum rule alone; measured with the 1/256 rules,
// data/bench/README.md).
template <int kSide>
inline __m256i cellSums(const std::uint8_t* corner0, const CellPattern*& pattern) {
  auto pair = [](const std::uint8_t* p) {
    std::uint16_t v;
    std::memcpy(&v, p, sizeof v);
    return int(v);
  };
  constexpr int kPlane = kSide * kSide;
  // Four bytes at corner 0, of which the next insert replaces the two past corner 1 (still inside the box: a cell's
  // lowest voxel has coordinates up to side - 2).
  std::int32_t first;
  std::memcpy(&first, corner0, sizeof first);
  __m128i w = _mm_cvtsi32_si128(first);
  w = _mm_insert_epi16(w, pair(corner0 + kSide), 1);
  w = _mm_insert_epi16(w, pair(corner0 + kPlane), 2);
  w = _mm_insert_epi16(w, pair(corner0 + kPlane + kSide), 3);
  // Bytes 8..15 are zero, so the mask is the 8-bit pattern (bit k: corner k is inside, weight >= 128).
  pattern = &kCellPatterns[unsigned(_mm_movemask_epi8(w))];
  // Corner pairs of edges 0..7 (kCellEdges) in the low half, of edges 8..11 in the high half; -1 reads zero.
  const __m256i corners = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 1, 3, 4, 6, 5, 7,  //
                                           0, 4, 1, 5, 2, 6, 3, 7, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i weights = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(w), corners);
  const __m256i pairs =
      _mm256_maddubs_epi16(weights, _mm256_load_si256(reinterpret_cast<const __m256i*>(pattern->sign)));  // <= 510
  const __m256i sums = _mm256_madd_epi16(pairs, _mm256_set1_epi16(256));  // [Unit: 1/65280 voxel]
  const int partly_in = _mm_movemask_epi8(w) & ~_mm_movemask_epi8(_mm_cmpeq_epi8(w, _mm_set1_epi8(-1)));
  const int partly_out = _mm_movemask_epi8(_mm_cmpgt_epi8(w, _mm_setzero_si128()));
  if ((partly_in != 0) & (partly_out != 0)) return _mm256_add_epi32(sums, linearCorrection(weights));
  return sums;
}

// Step 4, per pair of cells a and b: their vertices as int16 lanes (a.x, a.y, a.z, 0, b.x, b.y, b.z, 0) of offsets
// 1..1023 from each cell's lowest voxel centre. One phaddd finishes both cells' sums, and the rest works on both
// vertices at once: the patterns' constants complete the sums, one division by the patterns' divisors gives the means
// in 1/1024 voxel, truncated (the sums are >= 0, so that is the floor), then the clamp. The sums (<= 12 x 65280) and
// the divisors are exact in single precision, and a mean that is not an integer lies at least 1/3060 from one, far
// more than a rounding error of the division under any MXCSR mode; so the floor is the rule's exact one.
inline __m128i pairOffsets(__m256i sums_a, const CellPattern& a, __m256i sums_b, const CellPattern& b) {
  // (a.x, a.y, b.x, b.y | a.z, 0, b.z, 0), then 64-bit lanes in the order (a.xy, a.z0, b.xy, b.z0).
  const __m256i sums = _mm256_permute4x64_epi64(_mm256_hadd_epi32(sums_a, sums_b), 0xD8);
  const __m256i constants = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(b.constant),
                                                reinterpret_cast<const __m128i*>(a.constant));
  const __m256 divisors = _mm256_loadu2_m128(b.divisor, a.divisor);
  const __m256i means =
      _mm256_cvttps_epi32(_mm256_div_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(sums, constants)), divisors));
  const __m128i v = _mm_packs_epi32(_mm256_castsi256_si128(means), _mm256_extracti128_si256(means, 1));
  // Clamp x, y, z to 1..1023; lanes 3 and 7 (the pads) to 0.
  return _mm_min_epi16(_mm_max_epi16(v, _mm_setr_epi16(1, 1, 1, 0, 1, 1, 1, 0)),
                       _mm_setr_epi16(kPositionScale - 1, kPositionScale - 1, kPositionScale - 1, 0,
                                      kPositionScale - 1, kPositionScale - 1, kPositionScale - 1, 0));
}

// Per box index: the voxel's centre relative to the chunk origin, (1024 x + 512, 1024 y + 512, 1024 z + 512, 0) as
// int16 lanes in chunk coordinates [Unit: 1/1024 voxel].
template <int kSide>
constexpr std::array<std::uint64_t, std::size_t(kSide * kSide * kSide)> makeVoxelCentres() {
  constexpr int kCentre = kPositionScale / 2 - kPositionScale * (kSide - kChunkSize) / 2;
  std::array<std::uint64_t, std::size_t(kSide * kSide * kSide)> centres{};
  for (int i = 0; i < kSide * kSide * kSide; ++i) {
    const int x = i % kSide, y = i / kSide % kSide, z = i / (kSide * kSide);
    centres[std::size_t(i)] = std::uint64_t(std::uint16_t(kPositionScale * x + kCentre)) |
                              std::uint64_t(std::uint16_t(kPositionScale * y + kCentre)) << 16 |
                              std::uint64_t(std::uint16_t(kPositionScale * z + kCentre)) << 32;
  }
  return centres;
}
template <int kSide>
constexpr std::array<std::uint64_t, std::size_t(kSide * kSide * kSide)> kVoxelCentres = makeVoxelCentres<kSide>();

// Per bit of a 4-row word: the voxel index offset (dy side + x) from the word's first row; entry 64 for
// appendSetBits.
template <int kSide>
constexpr std::array<std::int16_t, 65> makeBitVoxels() {
  std::array<std::int16_t, 65> offsets{};
  for (int bit = 0; bit < 64; ++bit) offsets[std::size_t(bit)] = std::int16_t((bit >> 4) * kSide + (bit & 15));
  return offsets;
}
template <int kSide>
constexpr std::array<std::int16_t, 65> kBitVoxels = makeBitVoxels<kSide>();

// Per bit of an 8-row word of owned edges (bit 8 dy + dx, see eightRows): the voxel index offset of edge (apron + dx,
// apron + dy) from the slice's first voxel; entry 64 for appendSetBits.
template <int kSide>
constexpr std::array<std::int16_t, 65> makeOwnedBitVoxels() {
  constexpr int kOwnLo = (kSide - kChunkSize) / 2;
  std::array<std::int16_t, 65> offsets{};
  for (int bit = 0; bit < 64; ++bit) {
    offsets[std::size_t(bit)] = std::int16_t(kOwnLo + (bit & 7) + kSide * (kOwnLo + (bit >> 3)));
  }
  return offsets;
}
template <int kSide>
constexpr std::array<std::int16_t, 65> kOwnedBitVoxels = makeOwnedBitVoxels<kSide>();

// Byte shuffles from a quad's corner records to its triangles' indices (a, b, c, a, c, d), by orientation and split.
// The quad loop blends the records so the vertex indices q0..q3 sit in 16-bit lanes 3, 7, 2, 6. The quad is
// (q0, q3, q2, q1) when the upper end of its edge is the inside one ([0]), (q0, q1, q2, q3) when the lower end is
// ([1]); split 0 starts the triangles at its first vertex, split 1 at its second.
constexpr std::int8_t kQ0 = 6, kQ1 = 14, kQ2 = 4, kQ3 = 12;  // byte offsets
constexpr std::int8_t kQuadOrder[2][2][16] = {
    {{kQ0, kQ0 + 1, kQ3, kQ3 + 1, kQ2, kQ2 + 1, kQ0, kQ0 + 1, kQ2, kQ2 + 1, kQ1, kQ1 + 1, -1, -1, -1, -1},
     {kQ3, kQ3 + 1, kQ2, kQ2 + 1, kQ1, kQ1 + 1, kQ3, kQ3 + 1, kQ1, kQ1 + 1, kQ0, kQ0 + 1, -1, -1, -1, -1}},
    {{kQ0, kQ0 + 1, kQ1, kQ1 + 1, kQ2, kQ2 + 1, kQ0, kQ0 + 1, kQ2, kQ2 + 1, kQ3, kQ3 + 1, -1, -1, -1, -1},
     {kQ1, kQ1 + 1, kQ2, kQ2 + 1, kQ3, kQ3 + 1, kQ1, kQ1 + 1, kQ3, kQ3 + 1, kQ0, kQ0 + 1, -1, -1, -1, -1}},
};
// The same for a pair of quads, one per 128-bit half, so one load per split serves both: entry [first quad's lower
// end inside + 2 x second quad's].
struct alignas(32) PairOrder {
  std::int8_t split[2][32];  // [split]: the first quad's shuffle in bytes 0..15, the second's in 16..31
};
constexpr std::array<PairOrder, 4> kPairOrder = [] {
  std::array<PairOrder, 4> orders{};
  for (int lower = 0; lower < 4; ++lower) {
    for (int split = 0; split < 2; ++split) {
      for (int k = 0; k < 16; ++k) {
        orders[std::size_t(lower)].split[split][k] = kQuadOrder[lower & 1][split][k];
        orders[std::size_t(lower)].split[split][16 + k] = kQuadOrder[lower >> 1][split][k];
      }
    }
  }
  return orders;
}();
static_assert(sizeof(PairOrder) == 64);

// A material byte twice, for the two triangles of a quad in one store.
constexpr std::array<std::uint16_t, 256> kMaterialPair = [] {
  std::array<std::uint16_t, 256> pairs{};
  for (int m = 0; m < 256; ++m) pairs[std::size_t(m)] = std::uint16_t(m * 0x0101);
  return pairs;
}();

// What the quad loop reads and writes.
struct QuadStreams {
  const terrain::Voxel* box;
  std::uint16_t* indices;
  std::uint8_t* materials;
};

// Four consecutive 16-bit rows as one word: bit 16 k + x is bit x of rows[k]. The ring's edge lists walk 4 rows per
// word.
inline std::uint64_t fourRows(const std::uint16_t* rows) {
  std::uint64_t w;
  std::memcpy(&w, rows, sizeof w);
  return w;
}
// Eight consecutive byte rows as one word: bit 8 k + i is bit i of rows[k]. A slice's owned edges along one axis
// (8 x 8) fill exactly one word.
inline std::uint64_t eightRows(const std::uint8_t* rows) {
  std::uint64_t w;
  std::memcpy(&w, rows, sizeof w);
  return w;
}

// Step 5 for every edge along kAxis with its lower voxel in the chunk (kRing false) or, with the wide apron, within
// one voxel outside it (kRing true): one quad per active edge. First the active edges go to a list, then a counted
// loop makes their quads. The streams are local restrict pointers, so the byte-sized material stores cannot force
// reloads.
template <int kSide, int kAxis, bool kRing>
[[gnu::always_inline]] inline int emitAxis(MeshScratch& s, QuadStreams streams, int tri) {
  constexpr int kPlane = kSide * kSide;
  constexpr int kStep = kAxis == 0 ? 1 : kAxis == 1 ? kSide : kPlane;
  constexpr int kOwnLo = (kSide - kChunkSize) / 2, kOwnHi = kOwnLo + kChunkSize;
  constexpr int kLo = 1, kHi = kSide - 1;  // the ring pass's rows
  constexpr unsigned kOwnX = ((1u << kOwnHi) - 1) & ~((1u << kOwnLo) - 1);
  std::uint16_t* __restrict list = s.list;
  int count = 0;
  if constexpr (!kRing) {
    // Owned edges: one word per slice.
    for (int z = kOwnLo; z < kOwnHi; ++z) {
      count += appendSetBits(eightRows(s.owned_edges[kAxis] + kSide * z + kOwnLo), kOwnedBitVoxels<kSide>.data(),
                             kPlane * z, list + count);
    }
  } else {
    // The ring: 4-row words of the full rows, masked to the bits the owned pass did not take.
    for (int z = kLo; z < kHi; ++z) {
      for (int y0 = kLo; y0 < kHi; y0 += 4) {
        const int r0 = y0 + kSide * z;
        std::uint64_t keep = 0;
        for (int k = 0; k < 4 && y0 + k < kHi; ++k) {
          const int y = y0 + k;
          const bool inner = y >= kOwnLo && y < kOwnHi && z >= kOwnLo && z < kOwnHi;
          keep |= std::uint64_t(inner ? (~kOwnX & 0xFFFFu) : 0xFFFFu) << (16 * k);
        }
        count += appendSetBits(fourRows(s.edge_rows[kAxis] + r0) & keep, kBitVoxels<kSide>.data(), r0 * kSide,
                               list + count);
      }
    }
  }

  // The 4 cells around the edge, counter-clockwise seen from +axis (the header's quad rule).
  constexpr int kCell[3][4] = {
      {-kSide - kPlane, -kPlane, 0, -kSide}, {-kPlane - 1, -1, 0, -kPlane}, {-1 - kSide, -kSide, 0, -1}};
  const std::uint64_t* __restrict records = s.cell_record;
  const std::uint8_t* __restrict weight = s.weight;
  const terrain::Voxel* __restrict box = streams.box;
  std::uint16_t* __restrict indices = streams.indices + 3 * tri;
  std::uint8_t* __restrict materials = streams.materials + tri;
  // Two quads per step, one per 128-bit half; an odd last quad is paired with itself, and its twin's outputs land
  // in the buffers' slack.
  if (count % 2 != 0) list[count] = list[count - 1];
  auto cornerPairs = [&](std::size_t p, int first, int second) {  // the records of two of a quad's corners
    const std::uint64_t* corner = records + p;
    return _mm_insert_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(corner + kCell[kAxis][first])),
                            std::int64_t(corner[kCell[kAxis][second]]), 1);
  };
  for (int i = 0; i < count; i += 2) {
    const std::size_t pa = list[i], pb = list[i + 1];
    const __m256i v01 = _mm256_setr_m128i(cornerPairs(pa, 0, 1), cornerPairs(pb, 0, 1));
    const __m256i v23 = _mm256_setr_m128i(cornerPairs(pa, 2, 3), cornerPairs(pb, 2, 3));
    // Which end is inside decides the winding and the material; a coin toss the predictor cannot learn, so both are
    // selects, not branches. All ones when the lower end is inside (the sign bit of its weight), else zero.
    const auto lower_a = std::size_t(std::int64_t(std::int8_t(weight[pa])) >> 7);
    const auto lower_b = std::size_t(std::int64_t(std::int8_t(weight[pb])) >> 7);
    // The four vertex indices into lanes 2, 3, 6, 7 of each half, then one byte shuffle to the two triangles, stored
    // as 16 bytes of which the last 4 are overwritten by the next quad (the buffer has slack).
    const __m256i tags = _mm256_blend_epi16(v01, _mm256_srli_epi64(v23, 16), 0x44);
    const PairOrder& orders = kPairOrder[(lower_a & 1) | (lower_b & 2)];
    const __m256i order = _mm256_blendv_epi8(_mm256_load_si256(reinterpret_cast<const __m256i*>(orders.split[0])),
                                             _mm256_load_si256(reinterpret_cast<const __m256i*>(orders.split[1])),
                                             splitMasks13<kAxis>(v01, v23));
    const __m256i triangles = _mm256_shuffle_epi8(tags, order);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(indices + 6 * i), _mm256_castsi256_si128(triangles));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(indices + 6 * i + 6), _mm256_extracti128_si256(triangles, 1));
    const std::uint16_t material_a = kMaterialPair[box[pa + (kStep & ~lower_a)].material];
    const std::uint16_t material_b = kMaterialPair[box[pb + (kStep & ~lower_b)].material];
    std::memcpy(materials + 2 * i, &material_a, sizeof material_a);  // both triangles of each quad
    std::memcpy(materials + 2 * i + 2, &material_b, sizeof material_b);
  }
  return tri + 2 * count;
}

// Step 5 for the three axes, out of line: one call (and one set of register saves) per box.
template <int kSide, bool kRing>
[[gnu::noinline]] int emitQuads(MeshScratch& s, QuadStreams streams, int tri) {
  tri = emitAxis<kSide, 0, kRing>(s, streams, tri);
  tri = emitAxis<kSide, 1, kRing>(s, streams, tri);
  return emitAxis<kSide, 2, kRing>(s, streams, tri);
}

// Out of line, so the fast path in mesh() does not pay for this function's register saves.
template <int kApronSize>
[[gnu::noinline]] int meshBox(const terrain::Voxel* box, MeshScratch& s, ChunkMesh& out) {
  constexpr int kSide = boxSide(kApronSize), kPlane = kSide * kSide;
  if (!computeWeights<boxVolume(kApronSize)>(box, s.weight, s.inside_bits)) return 0;

  // Step 2: the inside bits as 16-bit rows, 16 rows per step. Row r is the side bits at bit side r of the inside
  // bits. Eight rows span side bytes (side is even); a byte shuffle gives each row a 32-bit lane starting at its
  // first byte, a variable shift drops the bits before the row (0..6 of them) and a mask those after it.
  std::uint16_t* in = s.inside_rows;
  static_assert(kSide % 2 == 0);
  constexpr auto kRowShuffle = [] {
    std::array<std::int8_t, 32> shuffle{};
    for (int lane = 0; lane < 8; ++lane) {
      for (int b = 0; b < 4; ++b) {
        shuffle[std::size_t(4 * lane + b)] = std::int8_t(kSide * lane / 8 + b);  // both halves hold the 16 bytes
      }
    }
    return shuffle;
  }();
  const __m256i row_shuffle = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kRowShuffle.data()));
  const __m256i row_shift = _mm256_setr_epi32(0, kSide % 8, 2 * kSide % 8, 3 * kSide % 8,  //
                                              4 * kSide % 8, 5 * kSide % 8, 6 * kSide % 8, 7 * kSide % 8);
  const __m256i row_mask = _mm256_set1_epi32((1 << kSide) - 1);
  auto eightRowsAt = [&](int r) {  // rows r..r+7 as 32-bit lanes, r a multiple of 8
    const __m256i bytes = _mm256_broadcastsi128_si256(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.inside_bits + kSide * r / 8)));
    return _mm256_and_si256(_mm256_srlv_epi32(_mm256_shuffle_epi8(bytes, row_shuffle), row_shift), row_mask);
  };
  for (int r = 0; r < kPlane; r += 16) {
    // packus_epi32 interleaves 128-bit lanes; the permute restores row order.
    const __m256i rows = _mm256_permute4x64_epi64(_mm256_packus_epi32(eightRowsAt(r), eightRowsAt(r + 8)), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(in + r), rows);
  }

  // Step 3, 16 rows per vector. Edges are meshed for lower voxels in [1, side - 1) on every axis: the chunk, or with
  // the wide apron the chunk plus one voxel (the neighbours' triangles, emitted after the owned ones). The cells
  // around an edge from (x, y, z): x-edges touch cells x, y-1..y, z-1..z; y-edges x-1..x, y, z-1..z; z-edges x-1..x,
  // y-1..y, z. So row r of cells gathers parts of the edge rows r, r+1, r+side and r+side+1.
  auto load = [](const std::uint16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
  auto store = [](std::uint16_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); };
  // The owned x bits of 16 rows as 16 bytes (packus interleaves 128-bit lanes; the permute takes qwords 0 and 2).
  auto storeOwned = [](std::uint8_t* p, __m256i e) {
    const __m256i own = _mm256_and_si256(_mm256_srli_epi16(e, kApronSize), _mm256_set1_epi16(0xFF));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi16(own, own), 0x08)));
  };
  constexpr int kVectorRows = (kPlane + kSide + 1 + 15) / 16 * 16;  // every row the cell packing below may read
  static_assert(kVectorRows + 16 <= kRowSlots);
  for (int r = 0; r < kVectorRows; r += 16) {
    const __m256i row = load(in + r), mask = load(kEdgeMasks<kSide>.data() + r);
    const __m256i ex = _mm256_and_si256(_mm256_xor_si256(row, _mm256_srli_epi16(row, 1)), mask);
    const __m256i ey = _mm256_and_si256(_mm256_xor_si256(row, load(in + r + 1)), mask);
    const __m256i ez = _mm256_and_si256(_mm256_xor_si256(row, load(in + r + kSide)), mask);
    store(s.edge_rows[0] + r, ex);
    store(s.edge_rows[1] + r, ey);
    store(s.edge_rows[2] + r, ez);
    storeOwned(s.owned_edges[0] + r, ex);
    storeOwned(s.owned_edges[1] + r, ey);
    storeOwned(s.owned_edges[2] + r, ez);
    const __m256i cy = _mm256_or_si256(ey, _mm256_srli_epi16(ey, 1));
    const __m256i cz = _mm256_or_si256(ez, _mm256_srli_epi16(ez, 1));
    store(s.cell_parts[0] + r, _mm256_or_si256(ex, _mm256_or_si256(cy, cz)));  // cells in row r
    store(s.cell_parts[1] + r, _mm256_or_si256(ex, cz));                       // cells in row r - 1
    store(s.cell_parts[2] + r, _mm256_or_si256(ex, cy));                       // cells in row r - side
  }
  // The cells' rows packed into one bit per box voxel, 16 rows per step: pmaddwd joins rows in twos (a 2 side bit
  // field per 32-bit lane), a shift and an add join those in twos (4 side bits per 64-bit lane), and the four 64-bit
  // lanes go to bit offsets 0, 4 side, 8 side, 12 side of the step's bits with overlapping 8-byte stores in increasing
  // order (each lane's top bits are zero). Every cell bit outside the box's cells is zero.
  auto* cell_bytes = reinterpret_cast<std::uint8_t*>(s.cell_bits);
  for (int r = 0; r < kPlane; r += 16) {
    const __m256i rows = _mm256_or_si256(_mm256_or_si256(load(s.cell_parts[0] + r), load(s.cell_parts[1] + r + 1)),
                                         _mm256_or_si256(load(s.cell_parts[2] + r + kSide),
                                                         load(s.edge_rows[0] + r + kSide + 1)));
    const __m256i twos = _mm256_madd_epi16(rows, _mm256_set1_epi32(1 | (1 << kSide) << 16));
    const __m256i fours = _mm256_add_epi64(_mm256_and_si256(twos, _mm256_set1_epi64x(0xFFFFFFFF)),
                                           _mm256_slli_epi64(_mm256_srli_epi64(twos, 32), 2 * kSide));
    std::uint8_t* bytes = cell_bytes + kSide * r / 8;
    constexpr int kStep = kSide / 2;  // bytes per 4 rows
    const __m128i low = _mm256_castsi256_si128(fours), high = _mm256_extracti128_si256(fours, 1);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(bytes), low);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(bytes + kStep), _mm_unpackhi_epi64(low, low));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(bytes + 2 * kStep), high);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(bytes + 3 * kStep), _mm_unpackhi_epi64(high, high));
  }

  // Step 4: vertices of the needed cells, in box order: the cells to a list, then a counted loop.
  constexpr int kLastCell = (kSide - 2) * (1 + kSide + kPlane);
  int vertex_count = 0;
  for (int k = 0; k <= kLastCell / 64; ++k) {
    vertex_count += appendSetBitIndices(s.cell_bits[k], 64 * k, s.list + vertex_count);
  }
  // Two cells per step; an odd last cell is paired with itself, its twin's vertex lands in the buffer's slack and
  // its record is written first, so the real one overwrites it.
  if (vertex_count % 2 != 0) s.list[vertex_count] = s.list[vertex_count - 1];
  Vertex* __restrict vertices = out.vertices.data();
  std::uint64_t* __restrict records = s.cell_record;
  const std::uint8_t* __restrict weight = s.weight;
  __m128i tags = _mm_setr_epi16(0, 0, 0, 0, 0, 0, 0, 1);  // vertex indices, in the pad lanes
  for (int i = 0; i < vertex_count; i += 2) {
    const std::size_t a = s.list[i], b = s.list[i + 1];
    const CellPattern *pattern_a, *pattern_b;
    const __m256i sums_a = cellSums<kSide>(weight + a, pattern_a);
    const __m256i sums_b = cellSums<kSide>(weight + b, pattern_b);
    const __m128i centres = _mm_insert_epi64(_mm_cvtsi64_si128(std::int64_t(kVoxelCentres<kSide>[a])),
                                             std::int64_t(kVoxelCentres<kSide>[b]), 1);
    const __m128i v = _mm_add_epi16(pairOffsets(sums_a, *pattern_a, sums_b, *pattern_b), centres);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(vertices + i), v);
    const __m128i record = _mm_add_epi16(v, tags);
    records[b] = std::uint64_t(_mm_extract_epi64(record, 1));
    records[a] = std::uint64_t(_mm_cvtsi128_si64(record));
    tags = _mm_add_epi16(tags, _mm_setr_epi16(0, 0, 0, 2, 0, 0, 0, 2));
  }
  out.vertex_count = vertex_count;

  // Step 5: quads, the owned edges first.
  const QuadStreams streams{box, out.indices.data(), out.materials.data()};
  int tri = emitQuads<kSide, false>(s, streams, 0);
  out.owned_triangle_count = tri;
  if constexpr (kApronSize == kWideApron) {
    tri = emitQuads<kSide, true>(s, streams, tri);
  }
  return tri;
}

// mesh() past its fast path: the input checks, the buffers, the wide apron's fast path, the box.
[[gnu::noinline]] Result<int> meshChecked(std::span<const terrain::Voxel> box, int apron, MeshScratch& scratch,
                                          ChunkMesh& out) {
  if (apron != kApron && apron != kWideApron) {
    return Error{ErrorCode::kInvalidArgument, "mesh: apron must be 1 or 2 voxels", {}};
  }
  if (box.size() != std::size_t(boxVolume(apron))) {
    return Error{ErrorCode::kInvalidArgument, "mesh: box must hold (8 + 2 apron)^3 voxels", {}};
  }
  // Buffers a caller shrank are regrown once; in steady state this allocates nothing.
  if (out.vertices.size() < kVertexCapacity) out.vertices.resize(kVertexCapacity);
  if (out.indices.size() < kIndexCapacity) out.indices.resize(kIndexCapacity);
  if (out.materials.size() < kMaterialCapacity) out.materials.resize(kMaterialCapacity);
  if (apron == kWideApron && noMeshedEdge<kWideApron>(box.data())) return 0;
  const int triangles = apron == kApron ? meshBox<kApron>(box.data(), scratch, out)
                                        : meshBox<kWideApron>(box.data(), scratch, out);
  out.triangle_count = triangles;
  return triangles;
}

}  // namespace

struct SurfaceMesher::Scratch : MeshScratch {};

ChunkMesh::ChunkMesh()
    : vertices(kVertexCapacity), indices(kIndexCapacity), materials(kMaterialCapacity) {}

SurfaceMesher::SurfaceMesher() : m_scratch(std::make_unique<Scratch>()) {}
SurfaceMesher::~SurfaceMesher() = default;

Result<int> SurfaceMesher::mesh(std::span<const terrain::Voxel> box, int apron, ChunkMesh& out) {
  out.vertex_count = out.triangle_count = out.owned_triangle_count = 0;
  // The fast path for the default apron, before anything else; the rest is out of line so this stays short.
  if (apron == kApron && box.size() == std::size_t(boxVolume(kApron)) && noMeshedEdge<kApron>(box.data())) return 0;
  return meshChecked(box, apron, *m_scratch, out);
}

}  // namespace vtp::mesher
