#pragma once
// The MIXED chunks' masks in segments of 1024 that never move, so a slot number stays valid, and its masks readable,
// for the store's whole life whatever is added later. That is what lets the index's fast query path read masks
// without its lock (mask_index.cpp): the writer stores each word atomically and readers load a chunk's words with
// vector loads, retrying when the index's sequence number says a write overlapped. The directory of segments is
// replaced by one twice as large when full; replaced directories are kept, like the segments, until the store dies.
// Slots 0-2 are sentinels that queries use for entries without masks: all zero (no entry), all-ones solid (FULL
// solid), all-ones water (FULL water); MIXED chunks whose masks equal a sentinel's share it (sharedSlot), which saves
// memory and keeps their reads in one hot cache line. Other slots are reused through a free list. Writes are not thread-safe (the
// index's exclusive lock serialises them).

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "vtp/physics/chunk_masks.h"

namespace vtp::physics {

class MaskStore {
 public:
  /// One chunk's masks with the solid and water words of each Y slice side by side (solid(y), water(y)), on cache line
  /// boundaries, so a query over a few slices reads one cache line or two, not always a solid and a water line.
  struct alignas(64) Masks {
    std::uint64_t words[16];
    const std::uint64_t& solid(std::size_t y) const { return words[2 * y]; }
    const std::uint64_t& water(std::size_t y) const { return words[2 * y + 1]; }
  };
  static constexpr std::uint32_t kNoMasks = 0, kAllSolid = 1, kAllWater = 2, kFirstOwned = 3;

  MaskStore() {
    static constexpr std::uint64_t kOnes = ~std::uint64_t(0);
    store(allocate(), ChunkMasks{});
    store(allocate(), ChunkMasks{MaskTag::kMixed, {kOnes, kOnes, kOnes, kOnes, kOnes, kOnes, kOnes, kOnes}, {}});
    store(allocate(), ChunkMasks{MaskTag::kMixed, {}, {kOnes, kOnes, kOnes, kOnes, kOnes, kOnes, kOnes, kOnes}});
  }
  MaskStore(const MaskStore&) = delete;
  MaskStore& operator=(const MaskStore&) = delete;

  /// A slot for new masks: a released one, else the next never used.
  std::uint32_t allocate() {
    if (!m_free.empty()) {
      const std::uint32_t slot = m_free.back();
      m_free.pop_back();
      return slot;
    }
    const std::size_t segment = m_used >> kSegmentBits;
    if ((m_used & (kSegmentSize - 1)) == 0) {
      if (segment == m_capacity) grow();
      m_segments.push_back(std::make_unique<Masks[]>(kSegmentSize));
      // Published with release: a reader that finds this slot in an entry also finds the segment.
      m_directories.back()[segment].store(m_segments.back().get(), std::memory_order_release);
    }
    return m_used++;
  }
  void release(std::uint32_t slot) { m_free.push_back(slot); }

  /// Stores the solid and water words of `m` in `slot`, word by word with release stores (plain stores on x86): a
  /// seqlock reader that read one of them finds the index's sequence number changed when it looks again.
  void store(std::uint32_t slot, const ChunkMasks& m) {
    Masks& at = m_segments[slot >> kSegmentBits][slot & (kSegmentSize - 1)];
    for (std::size_t y = 0; y < 8; ++y) {
      std::atomic_ref<std::uint64_t>(at.words[2 * y]).store(m.solid[y], std::memory_order_release);
      std::atomic_ref<std::uint64_t>(at.words[2 * y + 1]).store(m.water[y], std::memory_order_release);
    }
  }

  /// A sentinel holding exactly `m`'s words (all-ones solid and no water: common, most surface chunks dilate to
  /// that), or kFirstOwned when `m` needs a slot of its own.
  static std::uint32_t sharedSlot(const ChunkMasks& m) {
    std::uint64_t solid_all = ~std::uint64_t(0), solid_any = 0, water_all = ~std::uint64_t(0), water_any = 0;
    for (std::size_t y = 0; y < 8; ++y) {
      solid_all &= m.solid[y];
      solid_any |= m.solid[y];
      water_all &= m.water[y];
      water_any |= m.water[y];
    }
    if (~solid_all == 0 && water_any == 0) return kAllSolid;
    if (~water_all == 0 && solid_any == 0) return kAllWater;
    return kFirstOwned;
  }

  /// The slot a query reads for an entry: its own for MIXED, else the sentinel that answers like the tag.
  static std::uint32_t querySlot(MaskTag tag, std::uint32_t mixed_slot) {
    return tag == MaskTag::kMixed ? mixed_slot
           : tag == MaskTag::kFullSolid ? kAllSolid
           : tag == MaskTag::kFullWater ? kAllWater
                                        : kNoMasks;
  }

  /// The masks a query reads for an entry (querySlot's).
  const Masks& queryMasks(MaskTag tag, std::uint32_t mixed_slot) const { return at(querySlot(tag, mixed_slot)); }

  /// The masks of an allocated slot. Without a lock that excludes the writer, only a seqlock reader may read their
  /// words (mask_index.cpp).
  const Masks& at(std::uint32_t slot) const {
    const std::atomic<Masks*>* directory = m_directory.load(std::memory_order_acquire);
    return directory[slot >> kSegmentBits].load(std::memory_order_acquire)[slot & (kSegmentSize - 1)];
  }

  /// Slots holding masks of their own (allocated, not released, not sentinels).
  std::size_t ownedSlots() const { return m_used - m_free.size() - kFirstOwned; }

  /// Bytes of segments and directories.
  std::size_t allocatedBytes() const {
    std::size_t bytes = m_segments.size() * kSegmentSize * sizeof(Masks);
    for (std::size_t n = kFirstDirectory; n <= m_capacity; n *= 2) bytes += n * sizeof(std::atomic<Masks*>);
    return bytes;
  }

 private:
  static constexpr int kSegmentBits = 10;
  static constexpr std::uint32_t kSegmentSize = std::uint32_t(1) << kSegmentBits;
  static constexpr std::size_t kFirstDirectory = 16;

  // A directory twice as large (the first: kFirstDirectory), holding the same segments, published with release.
  void grow() {
    const std::size_t capacity = m_capacity == 0 ? kFirstDirectory : 2 * m_capacity;
    auto next = std::make_unique<std::atomic<Masks*>[]>(capacity);
    for (std::size_t i = 0; i < m_segments.size(); ++i) next[i].store(m_segments[i].get(), std::memory_order_relaxed);
    m_directory.store(next.get(), std::memory_order_release);
    m_directories.push_back(std::move(next));
    m_capacity = capacity;
  }

  std::atomic<const std::atomic<Masks*>*> m_directory{nullptr};
  std::vector<std::unique_ptr<std::atomic<Masks*>[]>> m_directories;  // the current one last
  std::size_t m_capacity = 0;                                          // of the current directory
  std::vector<std::unique_ptr<Masks[]>> m_segments;
  std::uint32_t m_used = 0;
  std::vector<std::uint32_t> m_free;
};

}  // namespace vtp::physics
