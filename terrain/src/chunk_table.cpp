#include "chunk_table.h"

#include "vtp/terrain/assert.h"

namespace vtp::terrain {

ChunkTable::Table::Table(std::size_t capacity) : mask(capacity - 1), slots(new Slot[capacity]) {
  VTP_ASSERT((capacity & (capacity - 1)) == 0, "a chunk table's capacity is a power of two");
}

ChunkTable::ChunkTable(EpochDomain& epochs) : m_epochs(epochs), m_current(new Table(64)) {}

ChunkTable::~ChunkTable() {
  Table* t = m_current.load();
  for (std::size_t i = 0; i <= t->mask; ++i) delete t->slots[i].chunk.load();
  delete t;
}

ChunkTable::Slot& ChunkTable::slotFor(ChunkCoord c) {
  if (const Slot* s = find(current(), c)) return const_cast<Slot&>(*s);
  Table* t = m_current.load(std::memory_order_relaxed);
  // Keep the load factor at or below 1/2 so probes stay short.
  if ((t->used + 1) * 2 > t->mask + 1) {
    grow();
    t = m_current.load(std::memory_order_relaxed);
  }
  std::size_t i = hash(c) & t->mask;
  while (t->slots[i].used.load(std::memory_order_relaxed) != 0) i = (i + 1) & t->mask;
  Slot& s = t->slots[i];
  s.key = c;
  s.used.store(1, std::memory_order_release);
  ++t->used;
  return s;
}

void ChunkTable::grow() {
  Table* old = m_current.load(std::memory_order_relaxed);
  auto next = std::make_unique<Table>((old->mask + 1) * 2);
  for (std::size_t i = 0; i <= old->mask; ++i) {
    const Slot& from = old->slots[i];
    if (from.used.load(std::memory_order_relaxed) == 0) continue;
    std::size_t j = hash(from.key) & next->mask;
    while (next->slots[j].used.load(std::memory_order_relaxed) != 0) j = (j + 1) & next->mask;
    Slot& to = next->slots[j];
    to.key = from.key;
    to.chunk.store(from.chunk.load(std::memory_order_relaxed), std::memory_order_relaxed);
    to.version.store(from.version.load(std::memory_order_relaxed), std::memory_order_relaxed);
    to.used.store(1, std::memory_order_relaxed);
    ++next->used;
  }
  // The old table shares the chunks with the new one; retiring it frees only its slot array.
  m_epochs.reserve(1);
  m_current.store(next.release(), std::memory_order_seq_cst);
  m_epochs.retire(static_cast<const Table*>(old));
}

void ChunkTable::publish(Slot& slot, std::unique_ptr<const Chunk> next) {
  const Chunk* old = slot.chunk.load(std::memory_order_relaxed);
  if (next && !old) ++m_stored;
  if (old && !next) --m_stored;
  // Chunk first, then version: a reader that sees the new version also sees the new chunk (a cache keyed by
  // chunkVersion never stores old content under a new version).
  slot.chunk.store(next.release(), std::memory_order_seq_cst);
  slot.version.store(slot.version.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
  if (old) m_epochs.retire(old);
}

}  // namespace vtp::terrain
