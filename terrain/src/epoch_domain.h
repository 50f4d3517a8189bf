#pragma once
// Epoch-based reclamation for the lock-free chunk map (Fraser, "Practical lock-freedom", 2004, ch. 5).
//
// Readers pin a slot with the current global epoch for the duration of a read; the editor publishes new pointers,
// advances the epoch, and retires the old objects tagged with the epoch before the advance. A retired object is
// freed once every slot is idle or pinned at a later epoch: such readers loaded their pointers after the new ones
// were published (all the atomics involved are sequentially consistent), so none can still hold the old one.

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vtp::terrain {

class EpochDomain {
 public:
  /// Concurrent pins before pin() has to wait for one to be released.
  static constexpr std::size_t kSlots = 128;

  EpochDomain() = default;
  EpochDomain(const EpochDomain&) = delete;
  EpochDomain& operator=(const EpochDomain&) = delete;
  ~EpochDomain();

  /// Any thread. Returns the slot to pass to unpin(). Waits (yields) only if all kSlots are pinned.
  std::size_t pin() const;
  /// Any thread; the slot returned by pin().
  void unpin(std::size_t slot) const;

  /// Editor only: makes room for `n` more retire() calls and for the advance after them, so that neither can fail
  /// (allocate). Call before unpublishing.
  void reserve(std::size_t n) {
    // Geometric growth: exact reserves would reallocate on every edit while a long read keeps the lists growing.
    auto grow = [](std::vector<Retired>& v, std::size_t need) {
      if (need > v.capacity()) v.reserve(std::max(need, 2 * v.capacity()));
    };
    grow(m_unstamped, m_unstamped.size() + n);
    grow(m_retired, m_retired.size() + m_unstamped.size() + n);  // advanceAndReclaim moves them there
  }
  /// Editor only: takes ownership of an object that no newly started read can reach any more; `destroy` frees it.
  /// Never throws when reserve() made room (an allocation failure here would free an object a reader may hold).
  template <class T>
  void retire(const T* garbage) {
    m_unstamped.push_back({0, garbage, [](const void* p) { delete static_cast<const T*>(p); }});
  }
  /// Editor only: ends the current epoch (call once after a group of retire()s) and frees what no reader can see.
  /// Allocates nothing when reserve() made room for the retire()s since the last advance.
  void advanceAndReclaim();
  /// Objects waiting to be freed.
  std::size_t pendingCount() const { return m_retired.size(); }

 private:
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> epoch{0};  // 0 = idle
  };
  struct Retired {
    std::uint64_t epoch;
    const void* object;
    void (*destroy)(const void*);
  };
  static void free(std::vector<Retired>& list, std::uint64_t below);
  mutable std::array<Slot, kSlots> m_slots{};
  std::atomic<std::uint64_t> m_global{1};
  std::vector<Retired> m_retired;  // editor-owned
  std::vector<Retired> m_unstamped;  // retired since the last advance
};

}  // namespace vtp::terrain
