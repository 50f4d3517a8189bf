#pragma once
// The MIXED chunks' masks, one cache line of words each for solid and for water, in segments of 1024 lines that never
// move, so a line number stays valid, and its words readable, for the store's whole life whatever is added later.
// That is what lets the index's fast query path read masks without its lock (mask_index.cpp): the writer stores each
// word atomically and readers load a chunk's words with vector loads, retrying when the index's sequence number says a
// write overlapped. The directory of segments is replaced by one twice as large when full; replaced directories are
// kept, like the segments, until the store dies.
// A chunk's masks take one line (its solid words) when it holds no water, and two (solid, then water; an even pair, so
// both lie in one segment) when it does: few chunks hold water (76 of about 5,600 MIXED chunks with masks of their
// own on the default world), so the masks take half the memory of two lines each, and a query reads one line for most
// chunks. Lines 0-3 are sentinels that queries use for entries without masks: a zero line (no entry; also every
// water-free chunk's water line for queries), all-ones solid (FULL solid), and a zero line then an all-ones water line
// (FULL water); MIXED chunks whose masks equal a sentinel's share it (sharedPlace). Other lines are reused through
// free lists. Writes are not thread-safe (the index's exclusive lock serialises them).

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "vtp/physics/chunk_masks.h"

namespace vtp::physics {

class MaskStore {
 public:
  /// Eight mask words on one cache line: a chunk's solid words of Y slices 0-7, or its water words.
  struct alignas(64) Line {
    std::uint64_t words[8];
  };
  /// Where a chunk's masks lie: its solid line, and whether its water line follows (else it holds no water).
  struct Place {
    std::uint32_t line = 0;
    bool water = false;
  };
  static constexpr Place kNoMasks{0, false}, kAllSolid{1, false}, kAllWater{2, true};
  static constexpr std::uint32_t kFirstOwned = 4;

  MaskStore() {
    static constexpr std::uint64_t kOnes = ~std::uint64_t(0);
    for (std::uint32_t line = 0; line < kFirstOwned; ++line) fresh();
    store(kNoMasks, ChunkMasks{});
    store(kAllSolid, ChunkMasks{MaskTag::kMixed, {kOnes, kOnes, kOnes, kOnes, kOnes, kOnes, kOnes, kOnes}, {}});
    store(kAllWater, ChunkMasks{MaskTag::kMixed, {}, {kOnes, kOnes, kOnes, kOnes, kOnes, kOnes, kOnes, kOnes}});
  }
  MaskStore(const MaskStore&) = delete;
  MaskStore& operator=(const MaskStore&) = delete;

  /// Lines for masks of their own: one, or an even pair with water. Released lines first, else never used ones. A
  /// pair split for a single line is not joined again: lines in use never exceed the peak of lines plus pairs.
  Place allocate(bool water) {
    m_owned += water ? 2 : 1;
    if (water) {
      if (!m_free_pairs.empty()) return {pop(m_free_pairs), true};
      if (m_used & 1) m_free_lines.push_back(fresh());  // keep pairs even
      const std::uint32_t line = fresh();
      fresh();
      return {line, true};
    }
    if (!m_free_lines.empty()) return {pop(m_free_lines), false};
    if (!m_free_pairs.empty()) {
      const std::uint32_t line = pop(m_free_pairs);
      m_free_lines.push_back(line + 1);
      return {line, false};
    }
    return {fresh(), false};
  }
  /// Gives back a place allocate() returned (not a sentinel), once.
  void release(Place p) {
    m_owned -= p.water ? 2 : 1;
    (p.water ? m_free_pairs : m_free_lines).push_back(p.line);
  }

  /// Stores the solid words of `m` in its line and, with water, the water words in the next, word by word with
  /// release stores (plain stores on x86): a seqlock reader that read one of them finds the index's sequence number
  /// changed when it looks again.
  void store(Place p, const ChunkMasks& m) {
    storeLine(p.line, m.solid);
    if (p.water) storeLine(p.line + 1, m.water);
  }

  /// Whether masks hold any water word (then they need a water line).
  static bool hasWater(const ChunkMasks& m) {
    std::uint64_t any = 0;
    for (const std::uint64_t w : m.water) any |= w;
    return any != 0;
  }
  /// A sentinel holding exactly `m`'s words (all-ones solid and no water: common, most surface chunks dilate to
  /// that), or nothing when `m` needs lines of its own.
  static std::optional<Place> sharedPlace(const ChunkMasks& m) {
    std::uint64_t solid_all = ~std::uint64_t(0), solid_any = 0, water_all = ~std::uint64_t(0), water_any = 0;
    for (std::size_t y = 0; y < 8; ++y) {
      solid_all &= m.solid[y];
      solid_any |= m.solid[y];
      water_all &= m.water[y];
      water_any |= m.water[y];
    }
    if (~solid_all == 0 && water_any == 0) return kAllSolid;
    if (~water_all == 0 && solid_any == 0) return kAllWater;
    return std::nullopt;
  }
  static bool owned(Place p) { return p.line >= kFirstOwned; }

  /// The place a query reads for an entry: its own for MIXED, else the sentinel that answers like the tag.
  static Place queryPlace(MaskTag tag, Place mixed) {
    return tag == MaskTag::kMixed ? mixed
           : tag == MaskTag::kFullSolid ? kAllSolid
           : tag == MaskTag::kFullWater ? kAllWater
                                        : kNoMasks;
  }

  /// An allocated line. Without a lock that excludes the writer, only a seqlock reader may read its words
  /// (mask_index.cpp).
  const Line& at(std::uint32_t line) const {
    const std::atomic<Line*>* directory = m_directory.load(std::memory_order_acquire);
    return directory[line >> kSegmentBits].load(std::memory_order_acquire)[line & (kSegmentSize - 1)];
  }
  /// A place's solid words, and its water words (the zero line's for a place without water).
  const std::uint64_t* solid(Place p) const { return at(p.line).words; }
  const std::uint64_t* water(Place p) const { return p.water ? at(p.line + 1).words : at(kNoMasks.line).words; }

  /// Lines holding masks of their own (allocated, not released, not sentinels).
  std::size_t ownedLines() const { return m_owned; }

  /// Bytes of segments and directories.
  std::size_t allocatedBytes() const {
    std::size_t bytes = m_segments.size() * kSegmentSize * sizeof(Line);
    for (std::size_t n = kFirstDirectory; n <= m_capacity; n *= 2) bytes += n * sizeof(std::atomic<Line*>);
    return bytes;
  }

 private:
  static constexpr int kSegmentBits = 10;
  static constexpr std::uint32_t kSegmentSize = std::uint32_t(1) << kSegmentBits;
  static_assert(kSegmentSize % 2 == 0, "an even pair of lines lies in one segment");
  static constexpr std::size_t kFirstDirectory = 16;

  static std::uint32_t pop(std::vector<std::uint32_t>& free) {
    const std::uint32_t line = free.back();
    free.pop_back();
    return line;
  }
  // The next never used line (a new segment when it starts one).
  std::uint32_t fresh() {
    const std::size_t segment = m_used >> kSegmentBits;
    if ((m_used & (kSegmentSize - 1)) == 0) {
      if (segment == m_capacity) grow();
      m_segments.push_back(std::make_unique<Line[]>(kSegmentSize));
      // Published with release: a reader that finds this line in an entry also finds the segment.
      m_directories.back()[segment].store(m_segments.back().get(), std::memory_order_release);
    }
    return m_used++;
  }
  void storeLine(std::uint32_t line, const SliceMask& words) {
    Line& at = m_segments[line >> kSegmentBits][line & (kSegmentSize - 1)];
    for (std::size_t y = 0; y < 8; ++y) {
      std::atomic_ref<std::uint64_t>(at.words[y]).store(words[y], std::memory_order_release);
    }
  }
  // A directory twice as large (the first: kFirstDirectory), holding the same segments, published with release.
  void grow() {
    const std::size_t capacity = m_capacity == 0 ? kFirstDirectory : 2 * m_capacity;
    auto next = std::make_unique<std::atomic<Line*>[]>(capacity);
    for (std::size_t i = 0; i < m_segments.size(); ++i) next[i].store(m_segments[i].get(), std::memory_order_relaxed);
    m_directory.store(next.get(), std::memory_order_release);
    m_directories.push_back(std::move(next));
    m_capacity = capacity;
  }

  std::atomic<const std::atomic<Line*>*> m_directory{nullptr};
  std::vector<std::unique_ptr<std::atomic<Line*>[]>> m_directories;  // the current one last
  std::size_t m_capacity = 0;                                        // of the current directory
  std::vector<std::unique_ptr<Line[]>> m_segments;
  std::uint32_t m_used = 0;
  std::size_t m_owned = 0;
  std::vector<std::uint32_t> m_free_lines, m_free_pairs;  // a pair by its first line
};

}  // namespace vtp::physics
