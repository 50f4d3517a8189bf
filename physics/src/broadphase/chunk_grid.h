#pragma once
// The mask index's dense lookup: one cell per chunk over a box of chunk coordinates that contains every entry, so a
// query finds a chunk's entry with one load instead of a hash probe (measured when the index was designed: 7.9 ns
// per visited chunk with a dense index against 14.5 with a hash map). Chunks outside the box have no entry. A cell is
// the address of the solid line a query reads (MaskStore::queryPlace's: 64-byte aligned) plus, in its low bits, the
// entry's tag and whether the water line follows, so a visit reaches the masks without the store's directory; a chunk
// without an entry holds the no-masks sentinel with tag kEmpty. The index builds a grid only while its box stays
// small (kMaxCells, and at most kCellsPerEntry per entry: a sparse world spread over a huge range keeps only the hash
// table) and replaces it by a larger one when an entry falls outside; a replaced grid is kept until the index dies,
// because lock-free readers may still be walking it (the index's sequence number sends them back), and serves again
// when the index needs a grid over the same chunks.
// Cells are written with release stores and read with acquire loads: a reader that sees a cell sees its segment.

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <memory>

#include "broadphase/mask_store.h"
#include "vtp/physics/chunk_masks.h"
#include "vtp/terrain/coords.h"

namespace vtp::physics {

class ChunkGrid {
 public:
  static constexpr std::int64_t kMaxCells = std::int64_t(1) << 22;  // 32 MB of cells
  static constexpr std::int64_t kCellsPerEntry = 64;

  using Cell = std::uintptr_t;  // the solid line's address | tag << kTagShift | kWaterBit if the water line follows
  // Bits 4-5: a query's answer table is indexed by tag << 4 (mask_index.cpp), so it masks the cell instead of shifting.
  static constexpr int kTagShift = 4;
  static constexpr Cell kWaterBit = 8;
  static_assert(alignof(MaskStore::Line) >= 64, "a cell keeps its bits in the line address's low 6 bits");

  /// A grid covering [lo, hi], every cell `empty` (no entry); nullptr when that is too many cells for `entries`.
  /// With `room`, each side gets 4 chunks and a quarter of the extent more, so a world that keeps growing replaces its
  /// grid a logarithmic number of times; without, the grid is tight (a loaded world's, which edits rarely grow).
  static std::unique_ptr<ChunkGrid> make(terrain::ChunkCoord lo, terrain::ChunkCoord hi, std::size_t entries,
                                         bool room, Cell empty) {
    const std::int64_t l[3] = {lo.x, lo.y, lo.z}, h[3] = {hi.x, hi.y, hi.z};
    std::int64_t first[3], n[3];
    for (int a = 0; a < 3; ++a) {
      const std::int64_t extra = room ? 4 + (h[a] - l[a] + 1) / 4 : 0;
      first[a] = l[a] - extra;
      n[a] = h[a] - l[a] + 1 + 2 * extra;
      if (n[a] > kMaxCells || first[a] < INT32_MIN || first[a] + n[a] - 1 > INT32_MAX) return nullptr;
    }
    const std::int64_t cells = n[0] * n[1] * n[2];
    if (cells > kMaxCells || cells > kCellsPerEntry * std::int64_t(std::max<std::size_t>(entries, 1024))) return nullptr;
    auto g = std::unique_ptr<ChunkGrid>(new ChunkGrid);
    g->m_lo = {std::int32_t(first[0]), std::int32_t(first[1]), std::int32_t(first[2])};
    for (int a = 0; a < 3; ++a) g->m_n[a] = std::int32_t(n[a]);
    g->m_hi = {g->m_lo.x + g->m_n[0] - 1, g->m_lo.y + g->m_n[1] - 1, g->m_lo.z + g->m_n[2] - 1};
    auto both = [](std::int32_t x, std::int32_t y, std::int32_t z, std::int32_t w) {
      return _mm256_setr_epi32(x, y, z, w, x, y, z, w);
    };
    g->m_lanes[0] = both(g->m_lo.x, g->m_lo.y, g->m_lo.z, g->m_lo.z);
    g->m_lanes[1] = both(g->m_hi.x, g->m_hi.y, g->m_hi.z, g->m_hi.z);
    g->m_lanes[2] = both(1, g->m_n[0], g->m_n[0] * g->m_n[1], 0);  // below kMaxCells
    g->m_cells = std::make_unique_for_overwrite<Cell[]>(std::size_t(cells));  // written once, below
    std::fill_n(g->m_cells.get(), cells, empty);
    for (int d = 0; d < 8; ++d) {
      const int dx = d & 1, dy = d >> 1 & 1, dz = d >> 2;
      g->m_block_steps[d] = _mm_setr_epi32(dx, dy, dz, std::int32_t(dx + n[0] * (dy + n[1] * dz)));
    }
    return g;
  }

  /// The cell of an entry whose masks lie at `place` of `store`.
  static Cell cell(MaskTag tag, const MaskStore& store, MaskStore::Place place) {
    return reinterpret_cast<Cell>(store.solid(place)) | Cell(tag) << kTagShift | (place.water ? kWaterBit : 0);
  }
  static MaskTag tagOf(Cell cell) { return MaskTag(cell >> kTagShift & 3); }
  /// The solid words of a cell's masks.
  static const std::uint64_t* solidOf(Cell cell) { return reinterpret_cast<const std::uint64_t*>(cell & ~Cell(63)); }
  /// Its water words when kWaterBit is set, else its solid words again (no branch; the query's answer table, indexed
  /// with the cell's bits, ignores them then).
  static const std::uint64_t* waterLineOf(Cell cell) { return solidOf(cell) + (cell & kWaterBit); }
  static_assert(kWaterBit == 8, "waterLineOf steps 8 words, one line");

  bool contains(terrain::ChunkCoord c) const {
    return std::uint32_t(c.x - m_lo.x) < std::uint32_t(m_n[0]) && std::uint32_t(c.y - m_lo.y) < std::uint32_t(m_n[1]) &&
           std::uint32_t(c.z - m_lo.z) < std::uint32_t(m_n[2]);
  }
  /// First and last chunk covered.
  terrain::ChunkCoord lo() const { return m_lo; }
  terrain::ChunkCoord hi() const { return m_hi; }
  /// The same as SIMD lanes (x, y, z, z) in both 128-bit halves, for the query's fast path (two boxes at a time).
  __m256i loLanes() const { return m_lanes[0]; }
  __m256i hiLanes() const { return m_lanes[1]; }
  /// indexOf for a covered chunk in lanes (x, y, z, any) of each half, in every lane of that half.
  __m256i indexLanes(__m256i c) const {
    const __m256i terms = _mm256_mullo_epi32(_mm256_sub_epi32(c, m_lanes[0]), m_lanes[2]);
    const __m256i pairs = _mm256_add_epi32(terms, _mm256_shuffle_epi32(terms, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm256_add_epi32(pairs, _mm256_shuffle_epi32(pairs, _MM_SHUFFLE(1, 0, 3, 2)));
  }
  std::size_t cellCount() const { return std::size_t(m_n[0]) * std::size_t(m_n[1]) * std::size_t(m_n[2]); }

  /// Index of chunk c's cell (c must be covered); x fastest, then y, then z.
  std::size_t indexOf(terrain::ChunkCoord c) const {
    return std::size_t(c.x - m_lo.x) +
           std::size_t(m_n[0]) * (std::size_t(c.y - m_lo.y) + std::size_t(m_n[1]) * std::size_t(c.z - m_lo.z));
  }

  /// Chunk d of a 2x2x2 block relative to its first (the mask query's small walk), two at a time: pair p holds steps
  /// 2p and 2p + 1, each (d & 1, d >> 1 & 1, d >> 2) and, in lane 3, the cell index offset.
  const __m256i* blockStepPairs() const { return reinterpret_cast<const __m256i*>(m_block_steps); }

  Cell load(std::size_t i) const { return loadAt(m_cells.get(), i); }
  /// The cells, for a reader that loads many (loadAt).
  const Cell* cells() const { return m_cells.get(); }
  static Cell loadAt(const Cell* cells, std::size_t i) {
    return std::atomic_ref<Cell>(const_cast<Cell&>(cells[i])).load(std::memory_order_acquire);
  }
  void store(terrain::ChunkCoord c, Cell value) {
    std::atomic_ref<Cell>(m_cells[indexOf(c)]).store(value, std::memory_order_release);
  }
  /// Every cell set to `value` (a retained grid made current again; readers may be walking it).
  void fill(Cell value) {
    for (std::size_t i = 0; i < cellCount(); ++i) std::atomic_ref<Cell>(m_cells[i]).store(value, std::memory_order_release);
  }

 private:
  ChunkGrid() = default;
  __m256i m_lanes[3];  // lo, hi, index strides
  alignas(32) __m128i m_block_steps[8];  // step d; read as pairs
  terrain::ChunkCoord m_lo, m_hi;
  std::int32_t m_n[3] = {};
  std::unique_ptr<Cell[]> m_cells;
};

}  // namespace vtp::physics
