#pragma once
// A map from chunk keys to pointers for the collider cache's shards: open addressing with linear probing and
// backward-shift deletion over 24-byte slots (key and pointer side by side), so a lookup reads a few consecutive
// slots (mostly one cache line) and divides nothing. Not thread-safe (each shard's mutex guards its map).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "vtp/terrain/coords.h"

namespace vtp::physics {

template <class T>
class ChunkPointerMap {
 public:
  /// `hash_shift`: the low bits of chunkHash that chose this map's shard (equal for all its keys), skipped here.
  explicit ChunkPointerMap(int hash_shift = 0) : m_shift(hash_shift), m_slots(16) {}

  /// The value of `c`, or nullptr.
  T* find(terrain::ChunkCoord c) const {
    for (std::size_t i = home(c);; i = (i + 1) & mask()) {
      const Slot& s = m_slots[i];
      if (s.value == nullptr) return nullptr;
      if (s.key == c) return s.value;
    }
  }
  /// Adds `c` -> `value` (not null); `c` must be absent.
  void insert(terrain::ChunkCoord c, T* value) {
    if ((m_size + 1) * 2 > m_slots.size()) grow();
    place({c, value});
    ++m_size;
  }
  /// Removes `c`, if present.
  void erase(terrain::ChunkCoord c) {
    std::size_t i = home(c);
    for (;; i = (i + 1) & mask()) {
      if (m_slots[i].value == nullptr) return;
      if (m_slots[i].key == c) break;
    }
    // Later slots of the probe run move up, so lookups never meet a tombstone.
    for (std::size_t j = (i + 1) & mask(); m_slots[j].value != nullptr; j = (j + 1) & mask()) {
      // Slot j may move to i when i lies cyclically in [home, j).
      if (((j - home(m_slots[j].key)) & mask()) >= ((j - i) & mask())) {
        m_slots[i] = m_slots[j];
        i = j;
      }
    }
    m_slots[i] = Slot{};
    --m_size;
  }
  std::size_t size() const { return m_size; }
  /// The farthest any entry lies from its home slot, in slots: the longest probe a lookup of a present key makes.
  std::size_t maxDisplacement() const {
    std::size_t most = 0;
    for (std::size_t i = 0; i < m_slots.size(); ++i) {
      if (m_slots[i].value != nullptr) most = std::max(most, (i - home(m_slots[i].key)) & mask());
    }
    return most;
  }
  /// Some entry's value, or nullptr when empty (for emptying the map one erase at a time, allocating nothing).
  T* any() const {
    for (const Slot& s : m_slots)
      if (s.value != nullptr) return s.value;
    return nullptr;
  }
  /// Calls fn(key, value) for every entry.
  template <class Fn>
  void forEach(Fn&& fn) const {
    for (const Slot& s : m_slots) {
      if (s.value != nullptr) fn(s.key, s.value);
    }
  }

 private:
  struct Slot {
    terrain::ChunkCoord key;
    T* value = nullptr;  // nullptr: the slot is free
  };
  std::size_t mask() const { return m_slots.size() - 1; }
  std::size_t home(terrain::ChunkCoord c) const { return std::size_t(terrain::chunkHash(c) >> m_shift) & mask(); }
  void place(const Slot& slot) {
    std::size_t i = home(slot.key);
    while (m_slots[i].value != nullptr) i = (i + 1) & mask();
    m_slots[i] = slot;
  }
  void grow() {
    std::vector<Slot> old(m_slots.size() * 2);
    old.swap(m_slots);
    for (const Slot& s : old) {
      if (s.value != nullptr) place(s);
    }
  }

  int m_shift;
  std::vector<Slot> m_slots;
  std::size_t m_size = 0;
};

}  // namespace vtp::physics
