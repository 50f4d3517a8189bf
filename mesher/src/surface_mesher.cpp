// Surface nets over one chunk box, with bit-mask edge detection (whole rows of voxels per operation) and integer
// occupancy-weighted vertices. The rules are stated in surface_mesher.h; this file is about doing them fast
// (techniques from ../shared/research/mesher-feasibility.md; the code is ours):
//   0. the fast path: a box whose voxels are all equal (all air, water or one solid) has no surface; checked with two
//      vector operations per 16 voxels before anything else;
//   1. weights: one AVX2 pass turns voxels into weights e (occupancy if solid, else 0) and detects the other boxes that
//      are all outside or all inside (no triangles) on the way;
//   2. rows: the inside bits of each (y, z) row of the box, read from the weights' sign bits (e >= 128 is inside);
//   3. edges and cells: XORs of neighbouring rows give the active edges of a whole row at once; ORs of shifted edge
//      rows give the cells whose vertices the quads need;
//   4. vertices: each needed cell averages the crossings of its active edges, in SIMD from a per-pattern table;
//   5. quads: each active edge joins its 4 cells' vertices, split along the shorter diagonal.
// Everything is specialised on the apron at compile time, so every stride is a constant.
#include "vtp/mesher/surface_mesher.h"

#include <immintrin.h>

#include <array>
#include <bit>
#include <cstring>

#include "cell_table.h"
#include "quad_split.h"

namespace vtp::mesher {

namespace {

constexpr int kMaxSide = boxSide(kWideApron);
constexpr int kMaxVolume = boxVolume(kWideApron);
// Index buffer size: 3 per triangle plus 2 of slack for the last quad's 16-byte store.
constexpr std::size_t kIndexCapacity = 3 * std::size_t(kMaxWideTriangles) + 2;

// Scratch memory for one box. Weights are padded so 16-byte row loads never leave the array.
// Row arrays hold the plane's rows (at most 12 x 12) plus room for 16-row vector loads at offsets up to side + 1.
constexpr int kRowSlots = 176;

struct MeshScratch {
  alignas(32) std::uint8_t weight[kMaxVolume + 32];
  alignas(32) std::uint16_t inside_rows[kRowSlots];   // row y + side z, bit x: voxel (x, y, z) is inside
  alignas(32) std::uint16_t edge_rows[3][kRowSlots];  // bit x: the edge from (x, y, z) along the axis is active
  alignas(32) std::uint16_t cell_parts[3][kRowSlots];  // per edge row, the cells it needs in rows r, r-1, r-side
  alignas(32) std::uint16_t cell_rows[kRowSlots];     // bit x: cell (x, y, z) has a vertex some quad uses
  std::uint16_t cell_vertex[kMaxVolume];              // vertex index of each needed cell (others stale)
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

// The fast path: whether every voxel of the box equals the first (all air, all water, all of one solid), in which case
// the box is all outside or all inside and has no surface. One XOR and one OR per 16 voxels and a single test at the
// end (the last load overlaps the one before it); a mixed box costs about 1% of meshing it.
template <int kVolume>
bool uniformBox(const terrain::Voxel* box) {
  std::uint16_t first;
  std::memcpy(&first, box, sizeof first);
  const __m256i ref = _mm256_set1_epi16(short(first));
  const auto* bytes = reinterpret_cast<const unsigned char*>(box);
  constexpr int size = kVolume * int(sizeof(terrain::Voxel));  // >= 2000
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

// Step 1: weights, and whether the box has both an inside voxel (some weight >= 128) and an outside one.
bool computeWeights(const terrain::Voxel* box, int volume, std::uint8_t* weight) {
  const __m256i low_bits = _mm256_set1_epi16(0x00FE);
  const __m256i zero = _mm256_setzero_si256();
  __m256i any = zero, all = _mm256_set1_epi8(-1);
  int i = 0;
  for (; i + 32 <= volume; i += 32) {
    // Voxels as u16 lanes: material in the low byte, occupancy in the high byte. Material >= 2 <=> (v & 0xFE) != 0.
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(box + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(box + i + 16));
    const __m256i wa = _mm256_andnot_si256(_mm256_cmpeq_epi16(_mm256_and_si256(a, low_bits), zero),
                                           _mm256_srli_epi16(a, 8));
    const __m256i wb = _mm256_andnot_si256(_mm256_cmpeq_epi16(_mm256_and_si256(b, low_bits), zero),
                                           _mm256_srli_epi16(b, 8));
    // packus interleaves 128-bit lanes; the permute restores voxel order.
    const __m256i w = _mm256_permute4x64_epi64(_mm256_packus_epi16(wa, wb), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(weight + i), w);
    any = _mm256_or_si256(any, w);
    all = _mm256_and_si256(all, w);
  }
  unsigned tail_any = 0, tail_all = 0xFF;
  for (; i < volume; ++i) {
    const terrain::Voxel v = box[i];
    const std::uint8_t w = terrain::isSolidMaterial(v.material) ? v.occupancy : 0;
    weight[i] = w;
    tail_any |= w;
    tail_all &= w;
  }
  const bool some_inside = _mm256_movemask_epi8(any) != 0 || (tail_any & 0x80) != 0;
  const bool some_outside = unsigned(_mm256_movemask_epi8(all)) != 0xFFFFFFFFu || (tail_all & 0x80) == 0;
  return some_inside && some_outside;
}

// Step 4: the vertex of one cell, as int16 lanes (x, y, z, 0) of offsets 1..255 from the cell's lowest voxel centre.
// The 8 corner weights go into one register, in corner order, so their sign bits (one pmovmskb) are the cell's
// inside/outside pattern; a byte shuffle lays out each edge's two corners, pmaddubsw with the pattern's signs gives
// the signed weight pairs, pmaddwd and phaddd sum them per axis, and the pattern's constant and reciprocal finish the
// floor of the mean.
template <int kSide>
inline __m128i cellOffset(const std::uint8_t* corner0) {
  auto pair = [](const std::uint8_t* p) {
    std::uint16_t v;
    std::memcpy(&v, p, sizeof v);
    return int(v);
  };
  constexpr int kPlane = kSide * kSide;
  __m128i w = _mm_cvtsi32_si128(pair(corner0));
  w = _mm_insert_epi16(w, pair(corner0 + kSide), 1);
  w = _mm_insert_epi16(w, pair(corner0 + kPlane), 2);
  w = _mm_insert_epi16(w, pair(corner0 + kPlane + kSide), 3);
  // Bytes 8..15 are zero, so the mask is the 8-bit pattern (bit k: corner k is inside, weight >= 128).
  const CellPattern& cp = kCellPatterns[unsigned(_mm_movemask_epi8(w))];
  // Corner pairs of edges 0..7 (kCellEdges) in the low half, of edges 8..11 in the high half; -1 reads zero.
  const __m256i corners = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 1, 3, 4, 6, 5, 7,  //
                                           0, 4, 1, 5, 2, 6, 3, 7, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i weights = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(w), corners);
  const __m256i pairs =
      _mm256_maddubs_epi16(weights, _mm256_load_si256(reinterpret_cast<const __m256i*>(cp.sign)));  // |.| <= 510
  const __m256i quads = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));  // x x y y | z z 0 0
  const __m256i sums = _mm256_hadd_epi32(quads, quads);                  // lanes 0, 1: x, y; lane 4: z
  __m128i v = _mm_unpacklo_epi64(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
  v = _mm_add_epi32(v, _mm_load_si128(reinterpret_cast<const __m128i*>(cp.constant)));  // 0..3072
  v = _mm_mulhi_epu16(_mm_packs_epi32(v, v), _mm_set1_epi16(short(cp.reciprocal)));
  // Clamp x, y, z to 1..255; lane 3 (the pad) to 0.
  return _mm_min_epi16(_mm_max_epi16(v, _mm_setr_epi16(1, 1, 1, 0, 1, 1, 1, 0)),
                       _mm_setr_epi16(255, 255, 255, 0, 255, 255, 255, 0));
}

// Per bit of a 4-row word (bit 16 dy + x, see fourRows): the position offset (256 x, 256 dy, 0, 0) as int16 lanes.
constexpr std::array<std::uint64_t, 64> makeBitOffsets() {
  std::array<std::uint64_t, 64> offsets{};
  for (int bit = 0; bit < 64; ++bit) {
    offsets[std::size_t(bit)] = std::uint64_t(kPositionScale * (bit & 15)) |
                                std::uint64_t(kPositionScale * (bit >> 4)) << 16;
  }
  return offsets;
}
constexpr std::array<std::uint64_t, 64> kBitOffsets = makeBitOffsets();

// Per bit of a 4-row word: the voxel index offset (dy side + x) from the word's first row.
template <int kSide>
constexpr std::array<std::int16_t, 64> makeBitVoxels() {
  std::array<std::int16_t, 64> offsets{};
  for (int bit = 0; bit < 64; ++bit) offsets[std::size_t(bit)] = std::int16_t((bit >> 4) * kSide + (bit & 15));
  return offsets;
}
template <int kSide>
constexpr std::array<std::int16_t, 64> kBitVoxels = makeBitVoxels<kSide>();

// Byte shuffles from packed (q0, q1, q2, q3) to the triangles' indices (a, b, c, a, c, d): split 0 takes
// (q0, q1, q2, q3), split 1 (q1, q2, q3, q0).
alignas(16) constexpr std::int8_t kSplitOrder[2][16] = {
    {0, 1, 2, 3, 4, 5, 0, 1, 4, 5, 6, 7, -1, -1, -1, -1},
    {2, 3, 4, 5, 6, 7, 2, 3, 6, 7, 0, 1, -1, -1, -1, -1},
};

// What the quad loop reads and writes.
struct QuadStreams {
  const Vertex* vertices;
  const std::uint16_t* cell_vertex;
  const terrain::Voxel* box;
  std::uint16_t* indices;
  std::uint8_t* materials;
};

// Four consecutive 16-bit rows as one word: bit 16 k + x is bit x of rows[k]. The bit loops below walk 4 rows per
// word, which saves most of the per-row loop overhead (and its mispredicted exits).
inline std::uint64_t fourRows(const std::uint16_t* rows) {
  std::uint64_t w;
  std::memcpy(&w, rows, sizeof w);
  return w;
}
constexpr std::uint64_t firstRows(int count) {
  return count >= 4 ? ~std::uint64_t(0) : (std::uint64_t(1) << (16 * count)) - 1;
}

// Step 5 for every edge along kAxis with its lower voxel in the chunk (kRing false) or, with the wide apron, within
// one voxel outside it (kRing true): one quad per active edge. Out of line, with the streams in local restrict
// pointers: one axis' loop gets the registers to itself, and the byte-sized material stores cannot force reloads.
template <int kSide, int kAxis, bool kRing>
__attribute__((noinline)) int emitAxis(const MeshScratch& s, QuadStreams streams, int tri) {
  constexpr int kPlane = kSide * kSide;
  constexpr int kStep = kAxis == 0 ? 1 : kAxis == 1 ? kSide : kPlane;
  constexpr int kOwnLo = (kSide - kChunkSize) / 2, kOwnHi = kOwnLo + kChunkSize;
  constexpr int kLo = kRing ? 1 : kOwnLo, kHi = kRing ? kSide - 1 : kOwnHi;
  constexpr unsigned kOwnX = ((1u << kOwnHi) - 1) & ~((1u << kOwnLo) - 1);
  // The 4 cells around the edge, counter-clockwise seen from +axis (the header's quad rule).
  constexpr int kCell[3][4] = {
      {-kSide - kPlane, -kPlane, 0, -kSide}, {-kPlane - 1, -1, 0, -kPlane}, {-1 - kSide, -kSide, 0, -1}};
  const Vertex* __restrict vertices = streams.vertices;
  const std::uint16_t* __restrict cell_vertex = streams.cell_vertex;
  const terrain::Voxel* __restrict box = streams.box;
  std::uint16_t* __restrict indices = streams.indices + 3 * tri;
  std::uint8_t* __restrict materials = streams.materials + tri;
  const std::uint16_t* __restrict edge_rows = s.edge_rows[kAxis];
  const std::uint16_t* __restrict inside_rows = s.inside_rows;
  int quads = 0;
  for (int z = kLo; z < kHi; ++z) {
    for (int y0 = kLo; y0 < kHi; y0 += 4) {
      const int r0 = y0 + kSide * z;
      // Which x bits of each row to take: the owned ones, or in the ring pass everything the owned pass did not.
      std::uint64_t keep = 0;
      for (int k = 0; k < 4 && y0 + k < kHi; ++k) {
        const int y = y0 + k;
        const bool inner = y >= kOwnLo && y < kOwnHi && z >= kOwnLo && z < kOwnHi;
        const unsigned row_keep = !kRing ? kOwnX : inner ? (~kOwnX & 0xFFFFu) : 0xFFFFu;
        keep |= std::uint64_t(row_keep) << (16 * k);
      }
      const std::uint64_t inside = fourRows(inside_rows + r0);
      for (std::uint64_t edges = fourRows(edge_rows + r0) & keep; edges != 0; edges &= edges - 1) {
        const int bit = std::countr_zero(edges);
        const int p = r0 * kSide + kBitVoxels<kSide>[std::size_t(bit)];
        const unsigned lower_inside = unsigned(inside >> bit) & 1;
        const std::uint16_t* cv = cell_vertex + p;
        const unsigned q0 = cv[kCell[kAxis][0]], q2 = cv[kCell[kAxis][2]];
        const unsigned c1 = cv[kCell[kAxis][1]], c3 = cv[kCell[kAxis][3]];
        // Reversed (v0, v3, v2, v1) when the upper end is the inside one, so the normal leaves the solid. Branch-free
        // (here and below): which end is inside is a coin toss the predictor cannot learn.
        const unsigned swap = (c1 ^ c3) & (0u - (lower_inside ^ 1u));
        const unsigned q1 = c1 ^ swap, q3 = c3 ^ swap;
        const unsigned split13 = chooseSplit13<kAxis>(vertices, q0, q1, q2, q3);
        // (v0,v1,v2),(v0,v2,v3), or for split13 the same started one vertex later: one byte shuffle of the four
        // indices, stored as 16 bytes of which the last 4 are overwritten by the next quad (the buffer has slack).
        __m128i packed = _mm_cvtsi32_si128(int(q0 | q1 << 16));
        packed = _mm_insert_epi32(packed, int(q2 | q3 << 16), 1);
        const __m128i order = _mm_load_si128(reinterpret_cast<const __m128i*>(kSplitOrder[split13]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(indices + 6 * quads), _mm_shuffle_epi8(packed, order));
        const auto material = std::uint16_t(box[p + kStep * int(lower_inside ^ 1u)].material * 0x0101u);
        std::memcpy(materials + 2 * quads, &material, sizeof material);  // both triangles
        ++quads;
      }
    }
  }
  return tri + 2 * quads;
}

// Out of line, so the fast path in mesh() does not pay for this function's register saves.
template <int kApronSize>
[[gnu::noinline]] int meshBox(const terrain::Voxel* box, MeshScratch& s, ChunkMesh& out) {
  constexpr int kSide = boxSide(kApronSize), kPlane = kSide * kSide;
  if (!computeWeights(box, boxVolume(kApronSize), s.weight)) return 0;

  // Step 2: inside bits per row, from the weights' sign bits.
  std::uint16_t* in = s.inside_rows;
  for (int r = 0; r < kPlane; ++r) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.weight + r * kSide));
    in[r] = std::uint16_t(unsigned(_mm_movemask_epi8(w)) & ((1u << kSide) - 1));
  }

  // Step 3, 16 rows per vector. Edges are meshed for lower voxels in [1, side - 1) on every axis: the chunk, or with
  // the wide apron the chunk plus one voxel (the neighbours' triangles, emitted after the owned ones). The cells
  // around an edge from (x, y, z): x-edges touch cells x, y-1..y, z-1..z; y-edges x-1..x, y, z-1..z; z-edges x-1..x,
  // y-1..y, z. So row r of cells gathers parts of the edge rows r, r+1, r+side and r+side+1.
  auto load = [](const std::uint16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
  auto store = [](std::uint16_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); };
  constexpr int kVectorRows = (kPlane + kSide + 1 + 15) / 16 * 16;  // every row step 4 below may read
  static_assert(kVectorRows + 16 <= kRowSlots);
  for (int r = 0; r < kVectorRows; r += 16) {
    const __m256i row = load(in + r), mask = load(kEdgeMasks<kSide>.data() + r);
    const __m256i ex = _mm256_and_si256(_mm256_xor_si256(row, _mm256_srli_epi16(row, 1)), mask);
    const __m256i ey = _mm256_and_si256(_mm256_xor_si256(row, load(in + r + 1)), mask);
    const __m256i ez = _mm256_and_si256(_mm256_xor_si256(row, load(in + r + kSide)), mask);
    store(s.edge_rows[0] + r, ex);
    store(s.edge_rows[1] + r, ey);
    store(s.edge_rows[2] + r, ez);
    const __m256i cy = _mm256_or_si256(ey, _mm256_srli_epi16(ey, 1));
    const __m256i cz = _mm256_or_si256(ez, _mm256_srli_epi16(ez, 1));
    store(s.cell_parts[0] + r, _mm256_or_si256(ex, _mm256_or_si256(cy, cz)));  // cells in row r
    store(s.cell_parts[1] + r, _mm256_or_si256(ex, cz));                       // cells in row r - 1
    store(s.cell_parts[2] + r, _mm256_or_si256(ex, cy));                       // cells in row r - side
  }
  for (int r = 0; r < kPlane; r += 16) {
    store(s.cell_rows + r, _mm256_or_si256(_mm256_or_si256(load(s.cell_parts[0] + r), load(s.cell_parts[1] + r + 1)),
                                           _mm256_or_si256(load(s.cell_parts[2] + r + kSide),
                                                           load(s.edge_rows[0] + r + kSide + 1))));
  }

  // Step 4: vertices of the needed cells, in box order.
  int vertex_count = 0;
  Vertex* __restrict vertices = out.vertices.data();
  std::uint16_t* __restrict cell_vertex = s.cell_vertex;
  constexpr int kCentre = kPositionScale / 2 - kPositionScale * kApronSize;
  for (int z = 0; z < kSide - 1; ++z) {
    for (int y0 = 0; y0 < kSide - 1; y0 += 4) {
      const int r0 = y0 + kSide * z;
      std::uint64_t cells = fourRows(s.cell_rows + r0) & firstRows(kSide - 1 - y0);
      if (cells == 0) continue;
      const __m128i word_base = _mm_setr_epi16(short(kCentre), short(kPositionScale * y0 + kCentre),
                                               short(kPositionScale * z + kCentre), 0, 0, 0, 0, 0);
      for (; cells != 0; cells &= cells - 1) {
        const int bit = std::countr_zero(cells);
        const int base = r0 * kSide + kBitVoxels<kSide>[std::size_t(bit)];
        const __m128i offset = _mm_add_epi16(
            word_base, _mm_loadl_epi64(reinterpret_cast<const __m128i*>(&kBitOffsets[std::size_t(bit)])));
        const __m128i v = _mm_add_epi16(cellOffset<kSide>(s.weight + base), offset);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(vertices + vertex_count), v);
        cell_vertex[base] = std::uint16_t(vertex_count++);
      }
    }
  }
  out.vertex_count = vertex_count;

  // Step 5: quads, the owned edges first.
  const QuadStreams streams{vertices, cell_vertex, box, out.indices.data(), out.materials.data()};
  int tri = emitAxis<kSide, 0, false>(s, streams, 0);
  tri = emitAxis<kSide, 1, false>(s, streams, tri);
  tri = emitAxis<kSide, 2, false>(s, streams, tri);
  out.owned_triangle_count = tri;
  if constexpr (kApronSize == kWideApron) {
    tri = emitAxis<kSide, 0, true>(s, streams, tri);
    tri = emitAxis<kSide, 1, true>(s, streams, tri);
    tri = emitAxis<kSide, 2, true>(s, streams, tri);
  }
  return tri;
}

}  // namespace

struct SurfaceMesher::Scratch : MeshScratch {};

ChunkMesh::ChunkMesh()
    : vertices(kMaxWideVertices), indices(kIndexCapacity), materials(kMaxWideTriangles) {}

SurfaceMesher::SurfaceMesher() : m_scratch(std::make_unique<Scratch>()) {}
SurfaceMesher::~SurfaceMesher() = default;

Result<int> SurfaceMesher::mesh(std::span<const terrain::Voxel> box, int apron, ChunkMesh& out) {
  out.vertex_count = out.triangle_count = out.owned_triangle_count = 0;
  if (apron != kApron && apron != kWideApron) {
    return Error{ErrorCode::kInvalidArgument, "mesh: apron must be 1 or 2 voxels", {}};
  }
  if (box.size() != std::size_t(boxVolume(apron))) {
    return Error{ErrorCode::kInvalidArgument, "mesh: box must hold (8 + 2 apron)^3 voxels", {}};
  }
  // Buffers a caller shrank are regrown once; in steady state this allocates nothing.
  if (out.vertices.size() < std::size_t(kMaxWideVertices)) out.vertices.resize(kMaxWideVertices);
  if (out.indices.size() < kIndexCapacity) out.indices.resize(kIndexCapacity);
  if (out.materials.size() < std::size_t(kMaxWideTriangles)) out.materials.resize(kMaxWideTriangles);
  // The fast path.
  if (apron == kApron ? uniformBox<boxVolume(kApron)>(box.data()) : uniformBox<boxVolume(kWideApron)>(box.data())) {
    return 0;
  }
  const int triangles = apron == kApron ? meshBox<kApron>(box.data(), *m_scratch, out)
                                        : meshBox<kWideApron>(box.data(), *m_scratch, out);
  out.triangle_count = triangles;
  return triangles;
}

}  // namespace vtp::mesher
