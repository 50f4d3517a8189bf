#pragma once
// Entries beside the mask index's grid: the few chunks that lie far from the rest (one voxel placed at x = 30000 in a
// 256-voxel world), kept in a small fixed table instead of growing the grid over the empty space between, so queries
// stay on the lock-free path. The grid then covers every entry but these. Slots are atomics written under the index's
// exclusive lock while its sequence number is odd, and read by the lock-free queries as seqlock readers: a read that
// overlapped a write is thrown away by the sequence check, and every slot always holds a cell that points at valid
// mask lines (mask segments never move), so even a torn read is safe to follow.
#include <array>
#include <atomic>
#include <cstdint>

#include "broadphase/chunk_grid.h"
#include "vtp/terrain/coords.h"

namespace vtp::physics {

class GridOutliers {
 public:
  static constexpr int kCapacity = 64;

  /// Readers (any thread; under the seqlock to be meaningful).
  int count() const { return m_count.load(std::memory_order_acquire); }
  terrain::ChunkCoord chunk(int k) const {
    const Slot& s = m_slots[std::size_t(k)];
    return {s.x.load(std::memory_order_relaxed), s.y.load(std::memory_order_relaxed), s.z.load(std::memory_order_relaxed)};
  }
  ChunkGrid::Cell cell(int k) const { return m_slots[std::size_t(k)].cell.load(std::memory_order_acquire); }
  /// The slot holding chunk `c`, or -1.
  int find(terrain::ChunkCoord c) const {
    const int n = count();
    for (int k = 0; k < n; ++k)
      if (chunk(k) == c) return k;
    return -1;
  }

  /// Writers (the index's exclusive lock, sequence odd). add() returns false when the table is full.
  bool add(terrain::ChunkCoord c, ChunkGrid::Cell value) {
    const int n = m_count.load(std::memory_order_relaxed);
    if (n == kCapacity) return false;
    Slot& s = m_slots[std::size_t(n)];
    s.x.store(c.x, std::memory_order_relaxed);
    s.y.store(c.y, std::memory_order_relaxed);
    s.z.store(c.z, std::memory_order_relaxed);
    s.cell.store(value, std::memory_order_release);
    m_count.store(n + 1, std::memory_order_release);
    return true;
  }
  void set(int k, ChunkGrid::Cell value) { m_slots[std::size_t(k)].cell.store(value, std::memory_order_release); }
  /// Removes slot k; the last slot moves into it.
  void remove(int k) {
    const int last = m_count.load(std::memory_order_relaxed) - 1;
    if (k != last) {
      const terrain::ChunkCoord c = chunk(last);
      Slot& s = m_slots[std::size_t(k)];
      s.x.store(c.x, std::memory_order_relaxed);
      s.y.store(c.y, std::memory_order_relaxed);
      s.z.store(c.z, std::memory_order_relaxed);
      s.cell.store(cell(last), std::memory_order_release);
    }
    m_count.store(last, std::memory_order_release);
  }
  void clear() { m_count.store(0, std::memory_order_release); }

 private:
  struct Slot {
    std::atomic<std::int32_t> x{0}, y{0}, z{0};
    std::atomic<ChunkGrid::Cell> cell{0};
  };
  std::array<Slot, kCapacity> m_slots;
  std::atomic<int> m_count{0};
};

}  // namespace vtp::physics
