#pragma once
// The world's chunk map: open addressing with linear probing, read lock-free by any number of threads while one
// editor inserts and swaps chunk pointers.
//
// Protocol: a slot's key is written once, before its `used` flag is set (release), and never changes in that table;
// readers check `used` (acquire) before comparing keys. Chunk pointers are swapped with atomic stores; the old
// version is retired to the EpochDomain. Growing builds a complete new table, publishes it with one store, and
// retires the old one (which does not own the chunks). Keys are never deleted: a chunk that becomes air keeps its
// slot with a null pointer, so its version counter survives.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "epoch_domain.h"
#include "vtp/terrain/chunk.h"
#include "vtp/terrain/coords.h"

namespace vtp::terrain {

class ChunkTable {
 public:
  struct Slot {
    std::atomic<std::uint32_t> used{0};
    ChunkCoord key;
    std::atomic<const Chunk*> chunk{nullptr};
    std::atomic<std::uint64_t> version{0};
  };
  struct Table {
    explicit Table(std::size_t capacity);
    std::size_t mask;
    std::size_t used = 0;  // editor-only count of used slots
    std::unique_ptr<Slot[]> slots;
  };

  explicit ChunkTable(EpochDomain& epochs);
  ~ChunkTable();  // frees every chunk; no reader may be active

  // --- Readers (caller holds a pin) ---
  const Table& current() const { return *m_current.load(std::memory_order_seq_cst); }
  // Inline: readBox makes 27 of these per 10^3 box.
  static const Slot* find(const Table& table, ChunkCoord c) { return find(table.slots.get(), table.mask, c, hash(c)); }
  /// find() with the table's fields and the key's hash already loaded (readBox resolves 27 neighbours this way,
  /// combining per-axis hash parts).
  static const Slot* find(const Slot* slots, std::size_t mask, ChunkCoord c, std::size_t h) {
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots[i];
      if (s.used.load(std::memory_order_acquire) == 0) return nullptr;
      if (s.key == c) return &s;
    }
  }
  const Chunk* findChunk(ChunkCoord c) const {
    const Slot* s = find(current(), c);
    return s ? s->chunk.load(std::memory_order_seq_cst) : nullptr;
  }

  // --- Editor only ---
  /// The slot for c, inserted (version 0, no chunk) if missing; may grow the table (which publishes a new table but
  /// changes no content, so it is safe to do before an edit commits).
  Slot& slotFor(ChunkCoord c);
  /// Publishes `next` (null = air) as chunk c's new version and retires the old one. Caller has reserved one retire
  /// slot in the EpochDomain, so this cannot throw.
  void publish(Slot& slot, std::unique_ptr<const Chunk> next);
  /// Stored (non-null) chunk count; editor-maintained.
  std::size_t storedCount() const { return m_stored; }
  std::size_t tableBytes() const { return (current().mask + 1) * sizeof(Slot); }

  static std::size_t hash(ChunkCoord c) { return std::size_t(chunkHash(c)); }

 private:
  void grow();
  EpochDomain& m_epochs;
  std::atomic<Table*> m_current;
  std::size_t m_stored = 0;
};

}  // namespace vtp::terrain
