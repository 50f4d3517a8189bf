#include "vtp/physics/mask_index.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <climits>
#include <cstring>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <thread>

#include "broadphase/chunk_grid.h"
#include "broadphase/grid_outliers.h"
#include "broadphase/mask_table.h"
#include "broadphase/query_range.h"
#include "cache/affected_chunks.h"
#include "vtp/terrain/assert.h"

namespace vtp::physics {

using terrain::ChunkCoord;
using terrain::kChunkSize;
using terrain::Voxel;
using terrain::VoxelBox;
using terrain::VoxelCoord;

namespace {

// The XZ footprint of voxels x lo..hi, z lo..hi of one chunk in a slice word (bit x + 8 z): x bits repeated in every
// row byte, and z rows lo..hi, both by table.
struct Footprints {
  std::uint64_t x[8][8] = {}, z[8][8] = {};
  constexpr Footprints() {
    for (int lo = 0; lo < 8; ++lo)
      for (int hi = lo; hi < 8; ++hi) {
        const std::uint64_t row = ((std::uint64_t(1) << (hi + 1)) - 1) & ~((std::uint64_t(1) << lo) - 1);
        x[lo][hi] = row * 0x0101010101010101ull;
        z[lo][hi] = (hi == 7 ? ~std::uint64_t(0) : (std::uint64_t(1) << (8 * (hi + 1))) - 1) &
                    ~((std::uint64_t(1) << (8 * lo)) - 1);
      }
  }
};
constexpr Footprints kFootprints;

// Which of a chunk's 8 solid words, and of its 8 water words (MaskStore: a line each), Y slices lo..hi select: all
// ones there, by table, so the slice test has no loop.
struct SliceLanes {
  alignas(64) std::uint64_t words[8][8][8] = {};
  constexpr SliceLanes() {
    for (int lo = 0; lo < 8; ++lo)
      for (int hi = lo; hi < 8; ++hi)
        for (int y = lo; y <= hi; ++y) words[lo][hi][y] = ~std::uint64_t(0);
  }
};
constexpr SliceLanes kSliceLanes;
static_assert(sizeof(kSliceLanes.words[0][0]) == 64, "listVisits computes sliceLanes' address with a shift by 6");

// The lock-free query paths read mask words and grid cells that an edit may be storing: a seqlock reader's racy reads,
// whose results the sequence check discards (State). Their loads are plain (whole-chunk vector loads of the masks);
// TSan builds leave these functions uninstrumented, as the race is the protocol's, not a bug.
// The reader's fence between those reads and its second look at the sequence number keeps the reads before it (a
// compiler barrier on x86); TSan, which rejects thread fences, gets the compiler barrier alone.
#if defined(__SANITIZE_THREAD__)
#define VTP_SEQLOCK_READER [[gnu::no_sanitize("thread")]]
inline void seqlockReadFence() { std::atomic_signal_fence(std::memory_order_seq_cst); }
#else
#define VTP_SEQLOCK_READER
inline void seqlockReadFence() { std::atomic_thread_fence(std::memory_order_acquire); }
#endif

// Slices lo..hi's lanes, as the slice test reads them.
inline const __m256i* sliceLanes(unsigned lo, unsigned hi) {
  return reinterpret_cast<const __m256i*>(kSliceLanes.words[lo][hi]);
}

// A chunk's answer as the last word of its ChunkTouch (solid, water and tag bytes) plus, in the top byte, whether it
// touches at all; by the sentinel test's 4 lane bits (touchWord), whether the chunk has a water line (bit 4: without
// one, the test's water lanes read the solid line again and count for nothing) and the tag (bits 5-6).
struct TouchWords {
  std::uint32_t of[128] = {};
  constexpr TouchWords() {
    for (std::uint32_t i = 0; i < 128; ++i) {
      const std::uint32_t zero = i & 15, water_line = i >> 4 & 1, tag = i >> 5;  // zero: lanes 0, 2 solid; 1, 3 water
      const std::uint32_t solid = (zero & 5) != 5, water = water_line & ((zero & 10) != 10);
      of[i] = solid | water << 8 | tag << 16 | (solid | water) << 24;
    }
  }
};
constexpr TouchWords kTouchWords;

// kTouchWords' index bits above the lane bits: a chunk with a water line (or not) and tag `tag`.
inline unsigned touchIndex(bool water_line, MaskTag tag) { return unsigned(water_line) << 4 | unsigned(tag) << 5; }
// The same from a grid cell: its water bit and tag bits, shifted by one.
inline unsigned touchIndexOf(ChunkGrid::Cell cell) {
  static_assert(ChunkGrid::kWaterBit == 8 && ChunkGrid::kTagShift == 4, "the cell's bits 3-5 are touchIndex's 4-6");
  return unsigned(cell & 0x38u) << 1;
}

// Whether a chunk touches solid and water in the slices `lanes` selects (sliceLanes) and the XZ `footprint`: its
// selected solid words ORed and its selected water words ORed, side by side (solid in lanes 0 and 2, water in 1 and
// 3), ANDed with the footprint; which of the 4 lanes are zero (a compare and a movemask) picks the answer from
// kTouchWords, with `index` = touchIndex or touchIndexOf. `solid` and `water` are lines of 8 words.
VTP_SEQLOCK_READER [[gnu::always_inline]] inline std::uint32_t touchWord(const std::uint64_t* solid,
                                                                         const std::uint64_t* water,
                                                                         const __m256i* lanes, std::uint64_t footprint,
                                                                         unsigned index) {
  const auto* s = reinterpret_cast<const __m256i*>(solid);
  const auto* w = reinterpret_cast<const __m256i*>(water);
  const __m256i l0 = _mm256_load_si256(lanes), l1 = _mm256_load_si256(lanes + 1);
  const __m256i any_solid =
      _mm256_or_si256(_mm256_and_si256(_mm256_load_si256(s), l0), _mm256_and_si256(_mm256_load_si256(s + 1), l1));
  const __m256i any_water =
      _mm256_or_si256(_mm256_and_si256(_mm256_load_si256(w), l0), _mm256_and_si256(_mm256_load_si256(w + 1), l1));
  __m256i any =
      _mm256_or_si256(_mm256_unpacklo_epi64(any_solid, any_water), _mm256_unpackhi_epi64(any_solid, any_water));
  any = _mm256_and_si256(any, _mm256_set1_epi64x(std::int64_t(footprint)));
  const auto zero = unsigned(_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(any, _mm256_setzero_si256()))));
  return kTouchWords.of[zero | index];
}

// One chunk of a query, by touchWord; `solid`, `water`, `index` and `tag` are its entry's (FULL and absent entries
// read sentinels), so there is no branch on the tag. Returns whether it touches.
VTP_SEQLOCK_READER [[gnu::always_inline]] inline bool touch(ChunkCoord c, MaskTag tag, const std::uint64_t* solid,
                                                            const std::uint64_t* water, unsigned index,
                                                            std::uint64_t footprint, int y_lo, int y_hi,
                                                            ChunkTouch* t) {
  const std::uint32_t word = touchWord(solid, water, sliceLanes(unsigned(y_lo), unsigned(y_hi)), footprint, index);
  std::construct_at(t, ChunkTouch{c, (word & 1) != 0, (word >> 8 & 1) != 0, tag});
  return (word >> 24) != 0;
}

static_assert(sizeof(ChunkTouch) == 16 && offsetof(ChunkTouch, solid) == 12 && offsetof(ChunkTouch, water) == 13 &&
              offsetof(ChunkTouch, tag) == 14);

// The query's voxels inside chunk k of its chunk range along one axis: from lo & 7 in the first chunk, to hi & 7 in
// the last, whole chunks between (& 7 is the floor modulo for negative voxels too).
inline int firstIn(std::int32_t k, std::int32_t first_chunk, std::int32_t lo) { return k == first_chunk ? lo & 7 : 0; }
inline int lastIn(std::int32_t k, std::int32_t last_chunk, std::int32_t hi) { return k == last_chunk ? hi & 7 : 7; }

// A body-sized range (at most two chunks per axis) on the grid: its chunks are a block of at most 2x2x2, chunk d of
// the block (bit 0: the second in x, bit 1: in y, bit 2: in z) at block step d (ChunkGrid::blockStepPairs) from the
// first. Clipped to the grid the block starts at a chunk whose coordinates and cell index `first` holds; bit i of its
// axes pattern is set when axis i still spans two chunks, and the visits are the pattern's subsets in increasing
// order, which is (z, y, x) order. Everything a visit reads is written per visit number v = 8 box + d, in SIMD lanes,
// so a visit does no per-axis arithmetic and decodes nothing: its coordinates and cell index, XZ footprint and slice
// lanes.
template <std::size_t kBoxes>
struct VisitTable {
  alignas(32) __m128i at[8 * kBoxes];               // (x, y, z, cell index) of chunk d
  alignas(32) std::uint64_t footprint[8 * kBoxes];  // its XZ footprint
  alignas(32) const __m256i* lanes[8 * kBoxes];     // its slice lanes
};

// Per axes pattern, the block's chunks in visiting order and how many; pattern kNoVisits: none (off the grid, or no
// voxel centre inside).
constexpr unsigned kNoVisits = 8;
struct VisitOrders {
  alignas(16) std::uint16_t of[9][8] = {};
  std::uint32_t count[9] = {};
  constexpr VisitOrders() {
    for (unsigned axes = 0; axes < 8; ++axes) {
      for (unsigned d = 0; d < 8; ++d) {
        if ((d & ~axes) == 0) of[axes][count[axes]++] = std::uint16_t(d);
      }
    }
  }
};
constexpr VisitOrders kVisitOrders;

// listVisits' constants (in both 128-bit halves), made once per walk and hidden from the optimiser, which would
// otherwise rebuild each from an immediate (three instructions) in every box's code.
struct ListConstants {
  __m256i one = _mm256_set1_epi32(1), seven = _mm256_set1_epi32(7), ff = _mm256_set1_epi32(0xFF);
  __m256i bit = _mm256_set1_epi64x(0x8040201008040201);  // byte k: bit k
  __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 4, 4, 4, 4,  //
                                    0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 4, 4, 4, 4);
  __m256i lanes_base = _mm256_set1_epi64x(std::int64_t(reinterpret_cast<std::uintptr_t>(sliceLanes(0, 0))));
  ListConstants() { asm("" : "+x"(one), "+x"(seven), "+x"(ff), "+x"(bit), "+x"(spread), "+x"(lanes_base)); }
};

// Two boxes' voxel spans side by side, box 0's lanes (x, y, z, z) in the low 128-bit half and box 1's in the high
// one: from the first span on, listVisits works on both boxes with the instructions one would take.
struct SpanPair {
  __m256i first, last;
  SpanPair(const VoxelSpan& s0, const VoxelSpan& s1)
      : first(_mm256_set_m128i(s1.first, s0.first)), last(_mm256_set_m128i(s1.last, s0.last)) {}
  /// Both boxes have a voxel centre inside and span at most two chunks per axis (the small walk's ranges).
  bool bodySized(__m256i one) const {
    const __m256i empty = _mm256_cmpgt_epi32(first, last);
    const __m256i chunks = _mm256_sub_epi32(_mm256_srai_epi32(last, 3), _mm256_srai_epi32(first, 3));  // minus 1
    const __m256i large = _mm256_cmpgt_epi32(chunks, one);
    return _mm256_testz_si256(_mm256_or_si256(empty, large), _mm256_or_si256(empty, large)) != 0;
  }
};

// One box's half (kHalf) of listVisits' results into its entries of `t`.
template <int kHalf, std::size_t kBoxes>
[[gnu::always_inline]] inline void writeVisits(const ChunkGrid& grid, VisitTable<kBoxes>& t, std::size_t box,
                                               __m256i x, __m256i z, __m256i rows, __m256i first,
                                               const ListConstants& k) {
  // Footprints: qwords (x0, x1, x0, x1) of the half (d & 1 picks the x chunk) and its z chunk's rows, for d >> 2 = 0
  // and 1.
  constexpr int kX = kHalf ? 0xEE : 0x44, kZ0 = kHalf ? 0xAA : 0x00, kZ1 = kHalf ? 0xFF : 0x55;
  const __m256i xx = _mm256_permute4x64_epi64(x, kX);
  auto* footprint = reinterpret_cast<__m256i*>(t.footprint + 8 * box);
  _mm256_store_si256(footprint, _mm256_and_si256(xx, _mm256_permute4x64_epi64(z, kZ0)));
  _mm256_store_si256(footprint + 1, _mm256_and_si256(xx, _mm256_permute4x64_epi64(z, kZ1)));
  // Slice lanes: 64 (8 lo + hi) bytes into kSliceLanes, d & 2 picking the y chunk.
  const __m128i half_rows = kHalf ? _mm256_extracti128_si256(rows, 1) : _mm256_castsi256_si128(rows);
  const __m256i lanes = _mm256_add_epi64(_mm256_slli_epi64(_mm256_cvtepu32_epi64(half_rows), 6), k.lanes_base);
  _mm256_store_si256(reinterpret_cast<__m256i*>(t.lanes + 8 * box), lanes);
  _mm256_store_si256(reinterpret_cast<__m256i*>(t.lanes + 8 * box + 4), lanes);
  // Coordinates and cell index: the first chunk's plus each d's step, two d at a time.
  const __m256i mine = _mm256_permute2x128_si256(first, first, kHalf ? 0x11 : 0x00);
  const __m256i* steps = grid.blockStepPairs();
  for (int pair = 0; pair < 4; ++pair) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(t.at + 8 * box + 2 * pair), _mm256_add_epi32(mine, steps[pair]));
  }
}

// The visits of two body-sized boxes (SpanPair::bodySized), entries box0 and box1 of `t` (the same box twice lists
// it alone). Returns their axes patterns, box0's in bits 0-3 and box1's in bits 4-7.
template <std::size_t kBoxes>
[[gnu::always_inline]] inline unsigned listVisits(const ChunkGrid& grid, const SpanPair& span, VisitTable<kBoxes>& t,
                                                  std::size_t box0, std::size_t box1, const ListConstants& k) {
  const __m256i one = k.one, seven = k.seven;
  const __m256i clo = _mm256_srai_epi32(span.first, 3), chi = _mm256_srai_epi32(span.last, 3);
  const __m256i a = _mm256_max_epi32(clo, grid.loLanes()), b = _mm256_min_epi32(chi, grid.hiLanes());
  const __m256i n = _mm256_sub_epi32(b, a);
  // Off the grid on some axis (a negative lane): no entries, so no visits.
  const unsigned outside = unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(n)));
  const unsigned axes = unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(n, one))));
  const unsigned pattern0 = (outside & 0xF) != 0 ? kNoVisits : axes & 7;
  const unsigned pattern1 = (outside >> 4) != 0 ? kNoVisits : axes >> 4 & 7;
  // The first chunk along an axis holds voxels first & 7 (0 if the grid clipped the range) to last & 7 (7 unless it is
  // the range's last chunk); a second chunk starts at 0.
  const __m256i last7 = _mm256_and_si256(span.last, seven);
  const __m256i lo0 = _mm256_and_si256(_mm256_cmpeq_epi32(a, clo), _mm256_and_si256(span.first, seven));
  const __m256i hi0 = _mm256_blendv_epi8(seven, last7, _mm256_cmpeq_epi32(a, chi));
  const __m256i hi1 = _mm256_blendv_epi8(seven, last7, _mm256_cmpeq_epi32(_mm256_add_epi32(a, one), chi));
  // Footprints: bits lo..hi of a byte are (0xFF << lo) & (0xFF >> (7 - hi)), per lane, for the first chunk along each
  // axis (m0) and the second (m1). x's bits repeat in every row byte; z's bit k becomes row byte k.
  const __m256i ff = k.ff, spread = k.spread, bit = k.bit;
  const __m256i m0 =
      _mm256_and_si256(_mm256_sllv_epi32(ff, lo0), _mm256_srlv_epi32(ff, _mm256_sub_epi32(seven, hi0)));
  const __m256i m1 = _mm256_srlv_epi32(ff, _mm256_sub_epi32(seven, hi1));
  const __m256i x = _mm256_shuffle_epi8(_mm256_unpacklo_epi32(m0, m1), spread);  // x bits of chunk 0, 1 per half
  const __m256i z_bits = _mm256_and_si256(_mm256_shuffle_epi8(_mm256_unpackhi_epi32(m0, m1), spread), bit);
  const __m256i z = _mm256_cmpeq_epi8(z_bits, bit);  // rows of chunk 0, 1 per half
  // Slice rows 8 lo + hi along y: (first chunk's, first's, second's, second's) per half.
  const __m256i row0 = _mm256_add_epi32(_mm256_slli_epi32(lo0, 3), hi0);
  const __m256i rows = _mm256_shuffle_epi32(_mm256_unpacklo_epi32(row0, hi1), _MM_SHUFFLE(3, 3, 2, 2));
  // The first chunk's coordinates with its cell index in lane 3 of each half.
  const __m256i first = _mm256_blend_epi32(a, grid.indexLanes(a), 0x88);
  writeVisits<0>(grid, t, box0, x, z, rows, first, k);
  writeVisits<1>(grid, t, box1, x, z, rows, first, k);
  return pattern0 | pattern1 << 4;
}

// Visit v's cell index (lane 3 of its coordinates, loaded on its own).
template <std::size_t kBoxes>
inline std::uint32_t cellIndex(const VisitTable<kBoxes>& t, unsigned v) {
  std::uint32_t index;
  std::memcpy(&index, reinterpret_cast<const char*>(&t.at[v]) + 12, sizeof index);
  return index;
}

// Asks for visit v's solid line ahead of its visit (water lines are rare, and not asked for): a world's masks outgrow
// the caches, and a batched walk knows its visits in advance. Prefetching 16 visits ahead took 15% off the batched
// query.
template <std::size_t kBoxes>
VTP_SEQLOCK_READER [[gnu::always_inline]] inline void prefetchVisit(const ChunkGrid::Cell* cells,
                                                                    const VisitTable<kBoxes>& t, unsigned v) {
  _mm_prefetch(reinterpret_cast<const char*>(ChunkGrid::solidOf(ChunkGrid::loadAt(cells, cellIndex(t, v)))),
               _MM_HINT_T0);
}

// Visit v of `t`, tested and written to `*touched` as one 16-byte store (coordinates, then the solid, water and tag
// bytes; the padding byte gets the touch word's top byte) whether or not it touches. Returns whether it does.
template <std::size_t kBoxes>
VTP_SEQLOCK_READER [[gnu::always_inline]] inline unsigned visitChunk(const ChunkGrid::Cell* cells,
                                                                     const VisitTable<kBoxes>& t, unsigned v,
                                                                     ChunkTouch* touched) {
  const __m128i at = t.at[v];
  const ChunkGrid::Cell cell = ChunkGrid::loadAt(cells, cellIndex(t, v));
  const std::uint32_t word = touchWord(ChunkGrid::solidOf(cell), ChunkGrid::waterLineOf(cell), t.lanes[v],
                                       t.footprint[v], touchIndexOf(cell));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(touched), _mm_insert_epi32(at, std::int32_t(word), 3));
  return word >> 24;
}

// The small walk: the chunks of a body-sized `span` (at most two chunks per axis, a voxel centre inside) that it
// touches, into `touched` (room for 8). Returns how many.
VTP_SEQLOCK_READER std::size_t walkSmall(const ChunkGrid& grid, const VoxelSpan& span, ChunkTouch* touched) {
  VisitTable<1> t;
  const unsigned pattern = listVisits(grid, SpanPair(span, span), t, 0, 0, ListConstants{}) & 15;
  std::size_t written = 0;
  for (unsigned k = 0; k < kVisitOrders.count[pattern]; ++k) {
    written += visitChunk(grid.cells(), t, kVisitOrders.of[pattern][k], touched + written);
  }
  return written;
}

// Whether chunks `clo` .. `chi` (lanes x, y, z) all lie on the grid.
inline bool onGrid(const ChunkGrid& grid, __m128i clo, __m128i chi) {
  const __m128i below = _mm_cmpgt_epi32(_mm256_castsi256_si128(grid.loLanes()), clo);
  const __m128i above = _mm_cmpgt_epi32(chi, _mm256_castsi256_si128(grid.hiLanes()));
  return (_mm_movemask_ps(_mm_castsi128_ps(_mm_or_si128(below, above))) & 7) == 0;
}

// A range of at most two chunks per axis, the small walk's.
inline bool smallRange(__m128i clo, __m128i chi) {
  return _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(_mm_sub_epi32(chi, clo), _mm_set1_epi32(1)))) == 0;
}

// Boxes a batched query sends through one seqlock section: an edit overlapping the section redoes at most these.
constexpr std::size_t kSectionBoxes = 64;
static_assert(8 * kSectionBoxes <= 0xFFFF, "visit numbers and counts are 16-bit");

// The small walk over `boxes` from the first, while each is valid and body-sized (at most kSectionBoxes): box i's
// touches into `out` from `used` on (room for 8 per box), and ends[i] where they end. Returns how many boxes
// it answered; it stops at the first invalid box or larger range, or (with `outliers`: entries beside the grid) the
// first box reaching off the grid, which the caller answers on its own.
// Two passes, so that no branch depends on how many chunks a box visits: the first lists each box's visits (8
// written, as many kept), two boxes at a time in the halves of AVX2 registers (0.91-0.93 of the batched query's time
// against one at a time, in an in-process A/B); the second makes every visit of the section in one loop, prefetching
// ahead.
template <Scaling kScaling>
VTP_SEQLOCK_READER std::size_t walkSmallBoxes(const ChunkGrid& grid, bool outliers, std::span<const Aabb> boxes,
                                              double voxel_size, double reciprocal, ChunkTouch* out, std::size_t used,
                                              std::size_t* ends) {
  VTP_ASSERT(boxes.size() <= kSectionBoxes, "a section holds at most kSectionBoxes boxes");
  constexpr std::size_t kAhead = 16;  // visits between a prefetch and its visit (a multiple of 8: the padding)
  VisitTable<kSectionBoxes> table;
  alignas(16) std::uint16_t visits[kSectionBoxes * 8 + kAhead];  // room for a box's 8 and for the padding
  std::uint16_t visits_end[kSectionBoxes];  // visits listed up to and including box i
  const ListConstants constants;
  std::size_t listed = 0, i = 0;
  auto append = [&](std::size_t box, unsigned pattern) {
    const __m128i order = _mm_load_si128(reinterpret_cast<const __m128i*>(kVisitOrders.of[pattern]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(visits + listed),
                     _mm_or_si128(order, _mm_set1_epi16(std::int16_t(8 * box))));
    listed += kVisitOrders.count[pattern];
    visits_end[box] = std::uint16_t(listed);
  };
  while (i < boxes.size()) {
    // Two boxes at a time while both are valid and body-sized.
    if (i + 1 < boxes.size()) {
      VoxelSpan s0, s1;
      const __m256d valid = _mm256_and_pd(voxelSpanLanes<kScaling>(boxes[i], voxel_size, reciprocal, s0),
                                          voxelSpanLanes<kScaling>(boxes[i + 1], voxel_size, reciprocal, s1));
      const SpanPair pair(s0, s1);
      if (_mm256_movemask_pd(valid) == 0xF && pair.bodySized(constants.one) &&
          (!outliers || (onGrid(grid, s0.firstChunk(), s0.lastChunk()) && onGrid(grid, s1.firstChunk(), s1.lastChunk())))) {
        const unsigned patterns = listVisits(grid, pair, table, i, i + 1, constants);
        append(i, patterns & 15);
        append(i + 1, patterns >> 4);
        i += 2;
        continue;
      }
    }
    // Box i alone: the last, or one of a pair that was not.
    VoxelSpan span;
    if (!voxelSpan<kScaling>(boxes[i], voxel_size, reciprocal, span)) break;
    unsigned pattern = kNoVisits;
    if (!span.empty()) {
      if (!smallRange(span.firstChunk(), span.lastChunk())) break;
      if (outliers && !onGrid(grid, span.firstChunk(), span.lastChunk())) break;
      pattern = listVisits(grid, SpanPair(span, span), table, i, i, constants) & 15;
    }
    append(i, pattern);
    ++i;
  }
  // After visit j, written_after[j + 1] touches are written past `used`.
  std::uint16_t written_after[kSectionBoxes * 8 + 1];
  written_after[0] = 0;
  const ChunkGrid::Cell* cells = grid.cells();
  std::size_t written = 0;
  if (listed > 0) {  // the last visit repeated past the end, so the prefetches need no bound
    const __m128i last = _mm_set1_epi16(std::int16_t(visits[listed - 1]));
    for (std::size_t p = 0; p < kAhead; p += 8) _mm_storeu_si128(reinterpret_cast<__m128i*>(visits + listed + p), last);
  }
  for (std::size_t j = 0; j < listed; ++j) {
    prefetchVisit(cells, table, visits[j + kAhead]);
    written += visitChunk(cells, table, visits[j], out + used + written);
    written_after[j + 1] = std::uint16_t(written);
  }
  for (std::size_t b = 0; b < i; ++b) ends[b] = used + written_after[visits_end[b]];
  return i;
}

// walkSmallBoxes with the box scaling decided once for the batch.
VTP_SEQLOCK_READER std::size_t walkSmallBoxes(const ChunkGrid& grid, bool outliers, std::span<const Aabb> boxes,
                                              double voxel_size, double reciprocal, ChunkTouch* out, std::size_t used,
                                              std::size_t* ends) {
  return reciprocal != 0
             ? walkSmallBoxes<Scaling::kMultiply>(grid, outliers, boxes, voxel_size, reciprocal, out, used, ends)
             : walkSmallBoxes<Scaling::kDivide>(grid, outliers, boxes, voxel_size, reciprocal, out, used, ends);
}

// One chunk of the range, anywhere in it: its footprint and slice range, then touch(), appending when touched.
VTP_SEQLOCK_READER void visit(ChunkCoord c, MaskTag tag, const std::uint64_t* solid, const std::uint64_t* water,
                              unsigned index, const QueryRange& r, std::vector<ChunkTouch>& out) {
  const std::uint64_t footprint =
      kFootprints.x[firstIn(c.x, r.chunk_lo.x, r.lo[0])][lastIn(c.x, r.chunk_hi.x, r.hi[0])] &
      kFootprints.z[firstIn(c.z, r.chunk_lo.z, r.lo[2])][lastIn(c.z, r.chunk_hi.z, r.hi[2])];
  ChunkTouch t;
  if (touch(c, tag, solid, water, index, footprint, firstIn(c.y, r.chunk_lo.y, r.lo[1]),
            lastIn(c.y, r.chunk_hi.y, r.hi[1]), &t)) {
    out.push_back(t);
  }
}

// Any other range on the grid: its chunks clipped to the grid, skipping cells without an entry.
VTP_SEQLOCK_READER void walkGrid(const ChunkGrid& grid, const QueryRange& r, std::vector<ChunkTouch>& out) {
  out.clear();
  const ChunkCoord clo = r.chunk_lo, chi = r.chunk_hi, glo = grid.lo(), ghi = grid.hi();
  const ChunkCoord a{std::max(clo.x, glo.x), std::max(clo.y, glo.y), std::max(clo.z, glo.z)};
  const ChunkCoord b{std::min(chi.x, ghi.x), std::min(chi.y, ghi.y), std::min(chi.z, ghi.z)};
  for (std::int32_t z = a.z; z <= b.z; ++z)
    for (std::int32_t y = a.y; y <= b.y; ++y) {
      std::size_t i = grid.indexOf({a.x, y, z});
      for (std::int32_t x = a.x; x <= b.x; ++x, ++i) {
        const ChunkGrid::Cell cell = grid.load(i);
        if (ChunkGrid::tagOf(cell) != MaskTag::kEmpty) {
          visit({x, y, z}, ChunkGrid::tagOf(cell), ChunkGrid::solidOf(cell), ChunkGrid::waterLineOf(cell),
                touchIndexOf(cell), r, out);
        }
      }
    }
}

// The entries beside the grid (GridOutliers) in range `r`, appended to `out`, which is then sorted again: on the
// grid's walk, inside its seqlock section.
VTP_SEQLOCK_READER void visitOutliers(const GridOutliers& outliers, const QueryRange& r, std::vector<ChunkTouch>& out) {
  const std::size_t before = out.size();
  const int n = outliers.count();
  for (int k = 0; k < n; ++k) {
    const ChunkCoord c = outliers.chunk(k);
    if (!r.containsChunk(c)) continue;
    const ChunkGrid::Cell cell = outliers.cell(k);
    visit(c, ChunkGrid::tagOf(cell), ChunkGrid::solidOf(cell), ChunkGrid::waterLineOf(cell), touchIndexOf(cell), r, out);
  }
  if (out.size() != before)
    std::sort(out.begin(), out.end(), [](const ChunkTouch& x, const ChunkTouch& y) { return x.chunk < y.chunk; });
}

// Every stored chunk and its 26 neighbours, sorted and without repeats: a chunk whose box holds anything lies within
// one chunk of a stored one. When the stored chunks' bounds (grown by one) hold at most kCandidateBits chunks, as a
// loaded world's compact extent does, one bit per chunk of those bounds marks them and a scan lists them in order;
// else 27 coordinates per stored chunk are sorted.
constexpr std::int64_t kCandidateBits = std::int64_t(1) << 24;  // 2 MiB
std::vector<ChunkCoord> candidateChunks(const terrain::World& world) {
  std::vector<ChunkCoord> stored;
  {
    auto guard = world.read();
    world.forEachChunk(guard, [&](ChunkCoord c, const terrain::Chunk&) { stored.push_back(c); });
  }
  std::vector<ChunkCoord> out;
  if (stored.empty()) return out;
  ChunkCoord lo = stored.front(), hi = stored.front();
  for (const ChunkCoord c : stored) {
    lo = {std::min(lo.x, c.x), std::min(lo.y, c.y), std::min(lo.z, c.z)};
    hi = {std::max(hi.x, c.x), std::max(hi.y, c.y), std::max(hi.z, c.z)};
  }
  // Sides of the grown bounds; each below 2^23 (chunk coordinates stay within 2^21 of the origin).
  const std::int64_t nx = std::int64_t(hi.x) - lo.x + 3, ny = std::int64_t(hi.y) - lo.y + 3,
                     nz = std::int64_t(hi.z) - lo.z + 3;
  if (nx * ny > kCandidateBits || nx * ny * nz > kCandidateBits) {
    for (const ChunkCoord c : stored) {
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) out.push_back({c.x + dx, c.y + dy, c.z + dz});
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  // Bit (x - lo.x + 1) + nx ((y - lo.y + 1) + ny (z - lo.z + 1)): increasing bits are ChunkCoord's order (z, y, x).
  std::vector<std::uint64_t> bits(std::size_t((nx * ny * nz + 63) / 64), 0);
  for (const ChunkCoord c : stored) {
    const std::int64_t at = (c.x - lo.x) + nx * ((c.y - lo.y) + ny * (c.z - lo.z));  // the (-1, -1, -1) neighbour
    for (std::int64_t dz = 0; dz < 3; ++dz)
      for (std::int64_t dy = 0; dy < 3; ++dy)
        for (std::int64_t dx = 0; dx < 3; ++dx) {
          const auto i = std::size_t(at + dx + nx * (dy + ny * dz));
          bits[i >> 6] |= std::uint64_t(1) << (i & 63);
        }
  }
  for (std::size_t w = 0; w < bits.size(); ++w) {
    for (std::uint64_t word = bits[w]; word != 0; word &= word - 1) {
      const auto i = std::int64_t(64 * w) + std::countr_zero(word);
      out.push_back({std::int32_t(lo.x - 1 + i % nx), std::int32_t(lo.y - 1 + i / nx % ny),
                     std::int32_t(lo.z - 1 + i / (nx * ny))});
    }
  }
  return out;
}

}  // namespace

// Concurrency. Edits (the world's listener, one at a time) and the slow query paths use `mutex`: exclusive for
// edits, shared for queries without a grid, huge boxes, masks() and stats(). The fast path (a grid exists and the
// range is not huge) takes no lock: it is a seqlock reader. An edit makes `seq` odd while it changes the table, the
// masks and the grid, and even again after; a reader notes an even `seq`, walks the grid, and starts over unless
// `seq` is unchanged (after an acquire fence, so the reads before it stay before it). The grid pointer and cells are
// atomic (release stores, acquire loads: plain moves on x86); mask words are stored atomically and read with plain
// vector loads (VTP_SEQLOCK_READER). Grids and mask segments are never freed while the index lives, so a reader
// overlapping an edit reads stale but valid memory and then retries.
struct MaskIndex::State {
  mutable std::shared_mutex mutex;
  MaskTable table;
  std::size_t mixed = 0, full_solid = 0, full_water = 0;
  std::atomic<std::uint64_t> seq{0};
  std::atomic<ChunkGrid*> grid{nullptr};  // the current grid, or none (the entries' range is too large)
  std::vector<std::unique_ptr<ChunkGrid>> grids;  // every grid made (the current one among them), kept for readers
  GridOutliers outliers;  // the entries the grid does not cover (none when there is no grid)
  // An update could not allocate: the table and grid may not match the world until recover() rebuilds them. Set
  // under the exclusive lock before the sequence number goes even again, so a query overlapping the failed update
  // sees it when it checks after its answer (MaskIndex::fresh).
  std::atomic<bool> stale{false};
  std::uint64_t recoveries = 0;  // rebuilds after such an update (under the exclusive lock)

  void count(MaskTag tag, int sign) {
    if (tag == MaskTag::kMixed) mixed += std::size_t(sign);
    if (tag == MaskTag::kFullSolid) full_solid += std::size_t(sign);
    if (tag == MaskTag::kFullWater) full_water += std::size_t(sign);
  }
  // Chunk c's masks from its 10^3 box; nothing when the box cannot be read (outside the readable range).
  static std::optional<ChunkMasks> read(const terrain::World& world, ChunkCoord c, std::vector<Voxel>& box) {
    // Between two edits: a listener reads while the next edit may be publishing, and its box could mix two versions
    // of the 27 chunks (masks of a world that never was: a contact query after both edits returned found nothing).
    if (!world.readBoxBetweenEdits(terrain::grown(terrain::chunkBox(c), kMaskApron), box).ok()) return std::nullopt;
    Result<ChunkMasks> built = buildChunkMasks(box);
    if (!built.ok()) return std::nullopt;
    return *built;
  }
  // Stores chunk c's masks (an empty tag drops its entry) in the table and the grid. Under the exclusive lock with
  // `seq` odd.
  void apply(ChunkCoord c, const ChunkMasks& m) {
    const MaskTable::Slot* old = table.find(c);
    if (old) count(old->tag, -1);
    table.set(c, m);
    count(m.tag, +1);
    const MaskTable::Slot* now = table.find(c);
    ChunkGrid* g = grid.load(std::memory_order_relaxed);
    if (!g) {
      // No grid: try again when an entry goes (the far one that stood in the way may be it).
      if (old && !now) makeGrid(true);
      return;
    }
    const ChunkGrid::Cell cell = now ? cellOf(*now) : noEntry();
    if (g->contains(c)) {
      g->store(c, cell);
      return;
    }
    const int k = outliers.find(c);
    if (k >= 0) {
      if (now) {
        outliers.set(k, cell);
      } else {
        outliers.remove(k);
      }
    } else if (now && !outliers.add(c, cell)) {
      makeGrid(true);  // a new entry off the grid and no room beside it
    }
  }
  ChunkGrid::Cell cellOf(const MaskTable::Slot& slot) const {
    return ChunkGrid::cell(slot.tag, table.store(), MaskStore::queryPlace(slot.tag, slot.place()));
  }
  // The cell of a chunk without an entry: the no-masks sentinel, tagged empty.
  ChunkGrid::Cell noEntry() const { return ChunkGrid::cell(MaskTag::kEmpty, table.store(), MaskStore::kNoMasks); }
  // A grid over the entries (replacing the current one), `room` to grow into: over all of them when that is small
  // enough (ChunkGrid::make), else over all but the GridOutliers::kCapacity farthest from their median chunk, which
  // the grid may leave beside it; none when even that is too large (queries then take the shared lock).
  void makeGrid(bool room) {
    std::vector<ChunkCoord> keys;
    keys.reserve(table.size());
    table.forEach([&](const MaskTable::Slot& s) { keys.push_back(s.key); });
    auto bounds = [](std::span<const ChunkCoord> cs, ChunkCoord& lo, ChunkCoord& hi) {
      lo = hi = cs.empty() ? ChunkCoord{} : cs.front();
      for (const ChunkCoord c : cs) {
        lo = {std::min(lo.x, c.x), std::min(lo.y, c.y), std::min(lo.z, c.z)};
        hi = {std::max(hi.x, c.x), std::max(hi.y, c.y), std::max(hi.z, c.z)};
      }
    };
    ChunkCoord lo, hi;
    bounds(keys, lo, hi);
    std::unique_ptr<ChunkGrid> g = ChunkGrid::make(lo, hi, table.size(), room, noEntry());
    if (!g && keys.size() > 1) {
      // The median chunk, and the entries by their distance (the largest axis difference) from it: the farthest
      // kCapacity go to the end, and the grid covers the rest.
      ChunkCoord median;
      std::vector<std::int32_t> axis(keys.size());
      for (int a = 0; a < 3; ++a) {
        for (std::size_t i = 0; i < keys.size(); ++i) axis[i] = a == 0 ? keys[i].x : a == 1 ? keys[i].y : keys[i].z;
        std::nth_element(axis.begin(), axis.begin() + std::ptrdiff_t(axis.size() / 2), axis.end());
        (a == 0 ? median.x : a == 1 ? median.y : median.z) = axis[axis.size() / 2];
      }
      auto distance = [&](ChunkCoord c) {
        return std::max({std::abs(std::int64_t(c.x) - median.x), std::abs(std::int64_t(c.y) - median.y),
                         std::abs(std::int64_t(c.z) - median.z)});
      };
      const std::size_t far = std::min<std::size_t>(GridOutliers::kCapacity, keys.size() - 1);
      const auto split = keys.end() - std::ptrdiff_t(far);
      std::nth_element(keys.begin(), split, keys.end(),
                       [&](ChunkCoord a, ChunkCoord b) { return distance(a) < distance(b); });
      bounds({keys.data(), std::size_t(split - keys.begin())}, lo, hi);
      g = ChunkGrid::make(lo, hi, table.size(), room, noEntry());
    }
    // A retained grid over the same chunks serves again (an entry coming and going at the edge would otherwise
    // leave a new grid behind each time): refilled, with `seq` odd, so readers walking it retry.
    ChunkGrid* use = g.get();
    if (g) {
      for (const auto& old : grids) {
        if (old->lo() == g->lo() && old->hi() == g->hi()) {
          old->fill(noEntry());
          use = old.get();
          g.reset();
          break;
        }
      }
    }
    if (g) grids.reserve(grids.size() + 1);  // before publishing: a failed push_back would free a published grid
    outliers.clear();
    if (use) {
      table.forEach([&](const MaskTable::Slot& s) {
        if (use->contains(s.key)) {
          use->store(s.key, cellOf(s));
        } else {
          const bool added = outliers.add(s.key, cellOf(s));
          VTP_ASSERT(added, "at most GridOutliers::kCapacity entries lie off the grid");
        }
      });
    }
    grid.store(use, std::memory_order_release);
    if (g) grids.push_back(std::move(g));  // reserved: cannot throw
  }
  // The seqlock's write side; the acquire-release increments keep the changes between them.
  void beginWrite() { seq.fetch_add(1, std::memory_order_acq_rel); }
  void endWrite() { seq.fetch_add(1, std::memory_order_release); }
  void querySlow(const QueryRange& r, bool huge, std::vector<ChunkTouch>& out) const;
  // The fast paths' seqlock read: `walk` on the grid until no edit overlapped it. False when there is no grid.
  template <class Walk>
  bool readGrid(Walk&& walk) const {
    for (;;) {
      const std::uint64_t before = seq.load(std::memory_order_acquire);
      if (before & 1) {
        std::this_thread::yield();
        continue;
      }
      const ChunkGrid* g = grid.load(std::memory_order_acquire);
      if (!g) return false;
      walk(*g);
      seqlockReadFence();
      if (seq.load(std::memory_order_relaxed) == before) return true;
    }
  }
};

Result<std::unique_ptr<MaskIndex>> MaskIndex::createChecked(terrain::World& world, MaskIndexOptions options) {
  if (options.max_range_chunks <= 0 || options.max_range_chunks > (std::int64_t(1) << 24)) {
    return Error{ErrorCode::kInvalidArgument, "MaskIndex: max_range_chunks must be in (0, 2^24]", {}};
  }
  return std::unique_ptr<MaskIndex>(new MaskIndex(world, options));
}

MaskIndex::MaskIndex(terrain::World& world, MaskIndexOptions options)
    : m_world(world),
      m_options(options),
      m_voxel_size(world.voxelSize()),
      m_voxel_reciprocal(exactReciprocal(m_voxel_size)),
      m_state(std::make_unique<State>()),
      m_listeners(std::make_shared<terrain::ListenerRegistry<const IndexUpdate&>>()) {
  // Subscribe first, then build under the lock: an edit landing during the build waits for it in its listener and
  // then rebuilds its chunks from fresh reads, so nothing is missed. (Not the other way round: the world calls
  // listeners holding its registry lock, so holding ours while subscribing would invert the lock order.)
  m_subscription = world.subscribe([this](std::span<const terrain::ChangeEvent> events) { rebuild(events); });
  std::unique_lock lock(m_state->mutex);
  const std::vector<ChunkCoord> candidates = candidateChunks(world);
  std::vector<Voxel> box(kMaskBoxVolume);
  m_state->beginWrite();
  for (ChunkCoord c : candidates) {
    if (std::optional<ChunkMasks> m = State::read(world, c, box)) m_state->apply(c, *m);
  }
  m_state->makeGrid(false);
  m_state->endWrite();
}

MaskIndex::~MaskIndex() { m_subscription.reset(); }

void MaskIndex::rebuild(std::span<const terrain::ChangeEvent> events) noexcept {
  std::vector<ChunkCoord> chunks;
  std::vector<VoxelBox> changed;
  bool failed = false;
  try {
    // Every chunk whose 10^3 box meets a changed voxel.
    chunks = affectedChunks(events, 1);
    for (const terrain::ChangeEvent& e : events) changed.push_back(e.changed);
    std::vector<Voxel> box(kMaskBoxVolume);
    // Read and build first, then store with `seq` odd: fast readers retry only while the stores run.
    std::unique_lock lock(m_state->mutex);
    std::vector<std::pair<ChunkCoord, ChunkMasks>> built;
    for (ChunkCoord c : chunks) {
      if (std::optional<ChunkMasks> m = State::read(m_world, c, box)) built.emplace_back(c, *m);
    }
    m_state->beginWrite();
    try {
      for (const auto& [c, m] : built) m_state->apply(c, m);
    } catch (const std::bad_alloc&) {
      m_state->stale.store(true, std::memory_order_release);  // before the sequence number is even again
      failed = true;
    }
    m_state->endWrite();
  } catch (const std::bad_alloc&) {
    std::unique_lock lock(m_state->mutex);
    m_state->stale.store(true, std::memory_order_release);
    failed = true;
  }
  // Then the listeners (pair trackers re-evaluate their bodies): they query the index, so after the exclusive lock.
  m_listeners->notify(IndexUpdate{chunks, changed, failed});
}

Status MaskIndex::recover() const {
  State& s = *m_state;
  std::unique_lock lock(s.mutex);
  if (!s.stale.load(std::memory_order_relaxed)) return {};
  try {
    // Every chunk that may hold something, and every entry the table has (some may have to go): read, built and
    // stored again, and a fresh grid.
    std::vector<ChunkCoord> chunks = candidateChunks(m_world);
    s.table.forEach([&](const MaskTable::Slot& slot) { chunks.push_back(slot.key); });
    std::sort(chunks.begin(), chunks.end());
    chunks.erase(std::unique(chunks.begin(), chunks.end()), chunks.end());
    std::vector<Voxel> box(kMaskBoxVolume);
    std::vector<std::pair<ChunkCoord, ChunkMasks>> built;
    for (ChunkCoord c : chunks) {
      std::optional<ChunkMasks> m = State::read(m_world, c, box);
      built.emplace_back(c, m ? *m : ChunkMasks{});  // unreadable: no entry
    }
    s.beginWrite();
    try {
      for (const auto& [c, m] : built) s.apply(c, m);
      s.makeGrid(true);
      s.stale.store(false, std::memory_order_release);
      ++s.recoveries;
    } catch (const std::bad_alloc&) {
    }
    s.endWrite();
  } catch (const std::bad_alloc&) {
  }
  if (s.stale.load(std::memory_order_relaxed))
    return Error{ErrorCode::kOutOfMemory, "MaskIndex: out of memory rebuilding after an update that could not allocate", {}};
  return {};
}

terrain::Subscription MaskIndex::subscribe(std::function<void(const IndexUpdate&)> listener) {
  return m_listeners->subscribe(std::move(listener));
}

template <class Answer>
Status MaskIndex::fresh(Answer&& answer) const {
  for (;;) {
    if (m_state->stale.load(std::memory_order_acquire))
      if (Status s = recover(); !s) return s;
    Status s = answer();
    if (!m_state->stale.load(std::memory_order_acquire)) return s;
  }
}

Status MaskIndex::query(const Aabb& box, std::vector<ChunkTouch>& out) const {
  Status s = fresh([&] { return queryNow(box, out); });
  if (!s) out.clear();
  return s;
}

Status MaskIndex::query(std::span<const Aabb> boxes, TouchBatch& out) const {
  Status s = fresh([&] { return queryNow(boxes, out); });
  if (!s) out.m_ends.clear();
  return s;
}

Status MaskIndex::queryNow(const Aabb& box, std::vector<ChunkTouch>& out) const {
  out.clear();
  VoxelSpan span;
  if (!voxelSpan(box, m_voxel_size, m_voxel_reciprocal, span)) {
    return rangeErrorOf(box, m_voxel_size, "MaskIndex::query");
  }
  if (span.empty()) return {};
  const State& state = *m_state;
  // Fast paths: the grid, as a seqlock reader (see State); chunks outside the grid have no entry.
  // At most two chunks per axis: the small walk (at most 8 chunks, so never "huge").
  const __m128i clo = span.firstChunk(), chi = span.lastChunk();
  if (smallRange(clo, chi)) {
    // Uninitialised storage: ChunkTouch's member initialisers would cost a 128-byte clear per query.
    alignas(ChunkTouch) unsigned char buffer[8 * sizeof(ChunkTouch)];
    ChunkTouch* touched = reinterpret_cast<ChunkTouch*>(buffer);
    std::size_t n = 0;
    bool beside = false;  // the range reaches off the grid where entries lie beside it
    if (state.readGrid([&](const ChunkGrid& grid) {
          n = walkSmall(grid, span, touched);
          beside = state.outliers.count() > 0 && !onGrid(grid, clo, chi);
          if (beside) {
            out.assign(touched, touched + n);
            visitOutliers(state.outliers, span.range(), out);
          }
        })) {
      // One by one: n is small, and a push is cheaper than assign's call to memmove.
      if (!beside)
        for (std::size_t i = 0; i < n; ++i) out.push_back(touched[i]);
      return {};
    }
    state.querySlow(span.range(), false, out);
    return {};
  }
  const QueryRange r = span.range();
  const bool huge = r.chunkCount() > m_options.max_range_chunks;
  if (!huge && state.readGrid([&](const ChunkGrid& grid) {
        walkGrid(grid, r, out);
        if (state.outliers.count() > 0 && !(grid.contains(r.chunk_lo) && grid.contains(r.chunk_hi)))
          visitOutliers(state.outliers, r, out);
      }))
    return {};
  state.querySlow(r, huge, out);
  return {};
}

Status MaskIndex::queryNow(std::span<const Aabb> boxes, TouchBatch& out) const {
  out.m_ends.resize(boxes.size());
  std::vector<ChunkTouch>& one = out.m_one;  // a box the small walk leaves
  std::size_t done = 0, used = 0;
  while (done < boxes.size()) {
    const std::size_t n = std::min(kSectionBoxes, boxes.size() - done);
    if (out.m_touches.size() < used + 8 * n) out.m_touches.resize(std::max(used + 8 * n, 2 * out.m_touches.size()));
    std::size_t walked = 0;
    const bool grid = m_state->readGrid([&](const ChunkGrid& g) {
      walked = walkSmallBoxes(g, m_state->outliers.count() > 0, boxes.subspan(done, n), m_voxel_size,
                              m_voxel_reciprocal, out.m_touches.data(), used, out.m_ends.data() + done);
    });
    if (!grid) walked = 0;  // a pass the sequence number rejected before the grid went away counts for nothing
    if (walked > 0) used = out.m_ends[done + walked - 1];
    done += walked;
    if (done == boxes.size() || (grid && walked == n)) continue;
    // Box `done` is invalid or larger, reaches off the grid beside which entries lie, or there is no grid: query()
    // alone.
    if (Status s = queryNow(boxes[done], one); !s) {
      out.m_ends.clear();
      return inBatch(s.error(), done);
    }
    if (out.m_touches.size() < used + one.size()) out.m_touches.resize(std::max(used + one.size(), 2 * used));
    std::copy(one.begin(), one.end(), out.m_touches.begin() + std::ptrdiff_t(used));
    used += one.size();
    out.m_ends[done++] = used;
  }
  return {};
}

// The slow paths, under the shared lock: the hash table over the range (no grid), or one pass over the entries for a
// huge box.
void MaskIndex::State::querySlow(const QueryRange& r, bool huge, std::vector<ChunkTouch>& out) const {
  out.clear();
  std::shared_lock lock(mutex);
  auto visitSlot = [&](const MaskTable::Slot& s) {
    const MaskStore::Place place = MaskStore::queryPlace(s.tag, s.place());
    visit(s.key, s.tag, table.store().solid(place), table.store().water(place), touchIndex(true, s.tag), r, out);
  };
  if (!huge) {
    for (std::int32_t z = r.chunk_lo.z; z <= r.chunk_hi.z; ++z)
      for (std::int32_t y = r.chunk_lo.y; y <= r.chunk_hi.y; ++y)
        for (std::int32_t x = r.chunk_lo.x; x <= r.chunk_hi.x; ++x) {
          if (const MaskTable::Slot* slot = table.find({x, y, z})) visitSlot(*slot);
        }
    return;
  }
  table.forEach([&](const MaskTable::Slot& slot) {
    if (r.containsChunk(slot.key)) visitSlot(slot);
  });
  std::sort(out.begin(), out.end(), [](const ChunkTouch& x, const ChunkTouch& y) { return x.chunk < y.chunk; });
}

namespace {

// Whether a chunk with these masks can own a triangle: MIXED, with a solid bit.
bool ownsTriangles(const ChunkMasks& m) {
  if (m.tag != MaskTag::kMixed) return false;
  std::uint64_t any = 0;
  for (const std::uint64_t w : m.solid) any |= w;
  return any != 0;
}

// The same for a grid cell (read under the seqlock).
VTP_SEQLOCK_READER bool cellOwnsTriangles(ChunkGrid::Cell cell) {
  if (ChunkGrid::tagOf(cell) != MaskTag::kMixed) return false;
  const __m256i* line = reinterpret_cast<const __m256i*>(ChunkGrid::solidOf(cell));  // one 64-byte line
  const __m256i any = _mm256_or_si256(_mm256_load_si256(line), _mm256_load_si256(line + 1));
  return !_mm256_testz_si256(any, any);
}

// Whether a chunk with these masks may hold (or border) water: FULL water, or MIXED with a water bit.
bool holdsWater(const ChunkMasks& m) {
  if (m.tag == MaskTag::kFullWater) return true;
  if (m.tag != MaskTag::kMixed) return false;
  std::uint64_t any = 0;
  for (const std::uint64_t w : m.water) any |= w;
  return any != 0;
}

// The same for a grid cell: its masks have a water line exactly when they hold a water bit (MaskStore).
bool cellHoldsWater(ChunkGrid::Cell cell) {
  const MaskTag tag = ChunkGrid::tagOf(cell);
  return tag == MaskTag::kFullWater || (tag == MaskTag::kMixed && (cell & ChunkGrid::kWaterBit) != 0);
}

}  // namespace

template <class CellTest, class MasksTest>
bool MaskIndex::chunkMay(ChunkCoord chunk, CellTest&& of_cell, MasksTest&& of_masks) const {
  bool may = false;
  // The grid and the table beside it hold every entry: a chunk in neither has none (the no-entry cell says no).
  const auto look = [&](const ChunkGrid& g) {
    if (g.contains(chunk)) {
      may = of_cell(g.load(g.indexOf(chunk)));
    } else {
      const int k = m_state->outliers.find(chunk);
      may = k >= 0 && of_cell(m_state->outliers.cell(k));
    }
  };
  // A stale index that cannot recover answers "maybe": the collider or the water voxels decide.
  if (!fresh([&] {
        if (!m_state->readGrid(look)) may = of_masks(masks(chunk));
        return Status{};
      }))
    return true;
  return may;
}

bool MaskIndex::mayOwnTriangles(ChunkCoord chunk) const { return chunkMay(chunk, cellOwnsTriangles, ownsTriangles); }

bool MaskIndex::mayHoldWater(ChunkCoord chunk) const { return chunkMay(chunk, cellHoldsWater, holdsWater); }

ChunkMasks MaskIndex::masks(ChunkCoord chunk) const {
  std::shared_lock lock(m_state->mutex);
  return m_state->table.get(chunk);
}

std::uint64_t MaskIndex::version() const noexcept { return m_state->seq.load(std::memory_order_acquire); }

MaskIndexStats MaskIndex::stats() const {
  std::shared_lock lock(m_state->mutex);
  MaskIndexStats s;
  s.entries = m_state->table.size();
  s.mixed = m_state->mixed;
  s.full_solid = m_state->full_solid;
  s.full_water = m_state->full_water;
  s.mask_bytes = m_state->table.maskBytesOwned();
  // Slots (key, tag, mask slot) at load factor <= 1/2, unused mask capacity, and the grids (current and replaced).
  s.index_bytes = m_state->table.slotCount() * sizeof(MaskTable::Slot) +
                  (m_state->table.maskBytesAllocated() - s.mask_bytes);
  for (const auto& g : m_state->grids) s.index_bytes += g->cellCount() * sizeof(ChunkGrid::Cell);
  s.lock_free = m_state->grid.load(std::memory_order_relaxed) != nullptr;
  s.beside_grid = std::size_t(m_state->outliers.count());
  s.recoveries = m_state->recoveries;
  return s;
}

}  // namespace vtp::physics
