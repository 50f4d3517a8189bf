#pragma once
// A few values a thread keeps by last use, for the water's caches (a hull's chords, a table of angles): a lookup scans
// the keys side by side, so it reads a few lines, not the values; a miss fills a new slot while fewer than kCapacity
// are kept, else the least recently used one. Values never move once made (their storage is reserved whole), so a
// reference stays valid until the slot is filled again. Not thread-safe: one per thread (thread_local).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vtp::physics::water {

template <class Key, class Value, std::size_t kCapacity>
class RecentlyUsed {
  static_assert(kCapacity > 0);

 public:
  /// The value kept under `key` for which `same(value)` holds, marked as used now. Otherwise a slot is filled by
  /// `fill(value)` (a default-constructed value in a new slot, the old value in a reused one) and kept under `key`;
  /// should `fill` throw, the slot is kept under no key.
  template <class Same, class Fill>
  Value& get(const Key& key, Same&& same, Fill&& fill) {
    ++m_clock;
    for (std::size_t i = 0; i < m_keys.size(); ++i) {
      if (m_keys[i] == key && m_last_use[i] != kUnused && same(m_values[i])) {
        m_last_use[i] = m_clock;
        return m_values[i];
      }
    }
    std::size_t slot = m_keys.size();
    if (slot < kCapacity) {
      m_keys.reserve(kCapacity);  // no push below allocates: the three stay in step, and values never move
      m_values.reserve(kCapacity);
      m_last_use.reserve(kCapacity);
      m_values.emplace_back();
      m_keys.push_back(key);
      m_last_use.push_back(kUnused);
    } else {
      slot = std::size_t(std::min_element(m_last_use.begin(), m_last_use.end()) - m_last_use.begin());
      m_last_use[slot] = kUnused;
    }
    fill(m_values[slot]);
    m_keys[slot] = key;
    m_last_use[slot] = m_clock;
    return m_values[slot];
  }

  /// Calls fn(value, last_use) for every value kept under a key; a larger last_use is a later use.
  template <class Fn>
  void forEach(Fn&& fn) {
    for (std::size_t i = 0; i < m_values.size(); ++i) {
      if (m_last_use[i] != kUnused) fn(m_values[i], m_last_use[i]);
    }
  }

  std::size_t size() const { return m_values.size(); }

 private:
  static constexpr std::uint64_t kUnused = 0;  // a slot kept under no key (uses count from 1)
  std::vector<Key> m_keys;                     // m_keys[i] is m_values[i]'s
  std::vector<Value> m_values;
  std::vector<std::uint64_t> m_last_use;
  std::uint64_t m_clock = 0;
};

}  // namespace vtp::physics::water
