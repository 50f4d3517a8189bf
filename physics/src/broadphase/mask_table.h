#pragma once
// The mask index's storage: an open-addressing hash table of small slots (key, tag, mask place) with linear probing
// and backward-shift deletion, and the MIXED chunks' masks in a MaskStore (stable lines, reused). A query's lookup
// touches one slot line and, for MIXED chunks, the masks; FULL chunks store no masks. Not thread-safe (the index
// guards it; only the masks may be read without its lock, see mask_store.h).

#include <cstdint>
#include <optional>
#include <vector>

#include "broadphase/mask_store.h"
#include "vtp/physics/chunk_masks.h"
#include "vtp/terrain/coords.h"

namespace vtp::physics {

class MaskTable {
 public:
  struct Slot {
    terrain::ChunkCoord key;
    MaskTag tag = MaskTag::kEmpty;  // kEmpty: the slot is free
    // The masks' MaskStore::Place (kMixed only; may be a shared sentinel), as two fields so the slot stays 20 bytes.
    bool water = false;
    std::uint32_t line = 0;
    MaskStore::Place place() const { return {line, water}; }
  };
  static_assert(sizeof(Slot) == 20);

  MaskTable() : m_slots(16) {}

  /// The slot holding `c`, or nullptr.
  const Slot* find(terrain::ChunkCoord c) const {
    for (std::size_t i = hash(c) & mask();; i = (i + 1) & mask()) {
      const Slot& s = m_slots[i];
      if (s.tag == MaskTag::kEmpty) return nullptr;
      if (s.key == c) return &s;
    }
  }
  const MaskStore& store() const { return m_masks; }

  /// The entry of `c` as ChunkMasks (tag kEmpty when absent).
  ChunkMasks get(terrain::ChunkCoord c) const {
    const Slot* s = find(c);
    if (!s) return {};
    ChunkMasks out{s->tag, {}, {}};
    if (s->tag == MaskTag::kMixed) {
      const std::uint64_t* solid = m_masks.solid(s->place());
      const std::uint64_t* water = m_masks.water(s->place());
      for (std::size_t y = 0; y < 8; ++y) {
        out.solid[y] = solid[y];
        out.water[y] = water[y];
      }
    }
    return out;
  }

  /// Sets (or, for tag kEmpty, removes) the entry of `c`.
  void set(terrain::ChunkCoord c, const ChunkMasks& m) {
    Slot* s = const_cast<Slot*>(find(c));
    if (m.tag == MaskTag::kEmpty) {
      if (s) erase(*s);
      return;
    }
    if (!s) {
      if ((m_size + 1) * 2 > m_slots.size()) grow();
      std::size_t i = hash(c) & mask();
      while (m_slots[i].tag != MaskTag::kEmpty) i = (i + 1) & mask();
      s = &m_slots[i];
      s->key = c;
      s->tag = MaskTag::kFullSolid;  // placeholder until the masks are placed below
      ++m_size;
    }
    placeMasks(*s, m);
  }

  std::size_t size() const { return m_size; }
  std::size_t slotCount() const { return m_slots.size(); }
  std::size_t maskBytesAllocated() const { return m_masks.allocatedBytes(); }
  /// Bytes of masks held by MIXED chunks of their own (shared sentinels excluded).
  std::size_t maskBytesOwned() const { return m_masks.ownedLines() * sizeof(MaskStore::Line); }
  template <typename Fn>
  void forEach(Fn&& fn) const {
    for (const Slot& s : m_slots) {
      if (s.tag != MaskTag::kEmpty) fn(s);
    }
  }

 private:
  static std::size_t hash(terrain::ChunkCoord c) { return std::size_t(terrain::chunkHash(c)); }
  std::size_t mask() const { return m_slots.size() - 1; }

  // Gives a slot the masks of `m`: MIXED keeps (or takes) lines of its own, as many as it needs (one, or two with
  // water), others release theirs. MIXED masks equal to a sentinel's share its lines instead.
  void placeMasks(Slot& s, const ChunkMasks& m) {
    const bool owned = ownsMasks(s);
    const std::optional<MaskStore::Place> shared =
        m.tag == MaskTag::kMixed ? MaskStore::sharedPlace(m) : std::optional(MaskStore::kNoMasks);
    MaskStore::Place place;
    if (!shared) {
      const bool water = MaskStore::hasWater(m);
      place = owned && s.water == water ? s.place() : m_masks.allocate(water);
      if (owned && s.water != water) m_masks.release(s.place());
      m_masks.store(place, m);
    } else {
      if (owned) m_masks.release(s.place());
      place = *shared;
    }
    s.line = place.line;
    s.water = place.water;
    s.tag = m.tag;
  }
  static bool ownsMasks(const Slot& s) { return s.tag == MaskTag::kMixed && MaskStore::owned(s.place()); }

  // Backward-shift deletion: later slots of the probe run move up, so lookups never need tombstones.
  void erase(Slot& slot) {
    if (ownsMasks(slot)) m_masks.release(slot.place());
    std::size_t i = std::size_t(&slot - m_slots.data());
    for (std::size_t j = (i + 1) & mask();; j = (j + 1) & mask()) {
      if (m_slots[j].tag == MaskTag::kEmpty) break;
      const std::size_t home = hash(m_slots[j].key) & mask();
      // Slot j may move to i when i lies cyclically in [home, j).
      if (((j - home) & mask()) >= ((j - i) & mask())) {
        m_slots[i] = m_slots[j];
        i = j;
      }
    }
    m_slots[i] = Slot{};
    --m_size;
  }

  void grow() {
    std::vector<Slot> old(m_slots.size() * 2);
    old.swap(m_slots);
    for (const Slot& s : old) {
      if (s.tag == MaskTag::kEmpty) continue;
      std::size_t i = hash(s.key) & mask();
      while (m_slots[i].tag != MaskTag::kEmpty) i = (i + 1) & mask();
      m_slots[i] = s;
    }
  }

  std::vector<Slot> m_slots;
  std::size_t m_size = 0;
  MaskStore m_masks;
};

}  // namespace vtp::physics
