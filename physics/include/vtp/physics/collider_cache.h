#pragma once
/// \file
/// The collider cache of one world: chunk colliders (collider.h) built on first use by a contact or ray query and
/// kept, least recently used first out, within a byte budget set at creation. A ray or box-gather query builds a
/// collider without edge flags (about half the build, which they never read); the first contact query on such a
/// chunk builds the full collider and replaces it (ColliderCacheStats::upgrades), and later queries of either kind use
/// that. When the full collider cannot be kept (no room: everything else pinned), it serves its query alone and the
/// one without edge flags stays. An edit drops the colliders of exactly
/// the chunks whose 12^3 box it changed (the chunk and two voxels around: the neighbours' triangles that
/// decide its edge flags), before the edit call returns, so the next query rebuilds: never stale.
///
/// Thread-safety: acquire() may run on any number of threads, concurrently with edits on the world. A collider is
/// pinned while a ColliderCache::Pin holds it and is never freed under its reader: eviction skips pinned colliders,
/// and one dropped by an edit while pinned is freed when its last pin goes. A hit takes only the mutex of one of 64
/// shards (chosen by the chunk's hash); a miss builds without any lock, then takes the cache's eviction mutex briefly
/// to make room and insert. If room cannot be made (everything else pinned), the new collider serves the query
/// alone, is freed when its pin goes and is never inserted (counted in `overflow_builds`).
///
/// Budget: the sum of Collider::bytes() of the colliders the cache holds (inserted, or dropped but still pinned)
/// never exceeds the budget; overflow builds are outside it.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "vtp/physics/collider.h"
#include "vtp/terrain/coords.h"
#include "vtp/terrain/status.h"
#include "vtp/terrain/world.h"

namespace vtp::physics {

struct ColliderCacheOptions {
  /// Most bytes of colliders held at once. [Unit: byte] In [1, 2^40].
  std::size_t byte_budget = std::size_t(64) << 20;
};

struct ColliderCacheStats {
  std::size_t bytes = 0;            ///< Bytes held now (see the file comment). [Unit: byte]
  std::size_t entries = 0;          ///< Colliders in the cache now.
  std::uint64_t hits = 0, misses = 0;
  std::uint64_t builds = 0;         ///< Colliders built (every miss builds one).
  std::uint64_t upgrades = 0;       ///< Colliders without edge flags replaced by a contact query's build (a miss).
  std::uint64_t evictions = 0;      ///< Dropped to make room.
  std::uint64_t invalidations = 0;  ///< Dropped because an edit changed their chunk.
  std::uint64_t overflow_builds = 0;  ///< Built but not inserted: no room could be made.
  std::uint64_t stale_builds = 0;   ///< Built but not inserted: an edit landed during the build.
  /// Edits whose invalidation could not allocate, so every collider was dropped instead (never one left stale).
  std::uint64_t out_of_memory_drops = 0;
};

class ColliderCache {
  struct Entry;

 public:
  /// A pinned collider: valid while the Pin lives. Movable, not copyable.
  class Pin {
   public:
    Pin() = default;
    Pin(Pin&& other) noexcept;
    Pin& operator=(Pin&& other) noexcept;
    ~Pin();
    const Collider* get() const noexcept;
    const Collider& operator*() const noexcept { return *get(); }
    const Collider* operator->() const noexcept { return get(); }
    explicit operator bool() const noexcept { return m_entry != nullptr; }
    /// Whether the acquire that made this pin built a collider (a miss; the pin may hold another thread's build of the
    /// same chunk that was inserted first).
    bool built() const noexcept { return m_built; }

   private:
    friend class ColliderCache;
    Pin(ColliderCache* cache, Entry* entry, bool built = false) : m_cache(cache), m_entry(entry), m_built(built) {}
    ColliderCache* m_cache = nullptr;
    Entry* m_entry = nullptr;
    bool m_built = false;
  };

  /// Subscribes to `world`'s change events; the cache must be destroyed before the world, and every Pin before the
  /// cache. Errors: a CPU without x86-64-v3 (kUnsupportedCpu), a budget outside its range (kInvalidArgument).
  static Result<std::unique_ptr<ColliderCache>> create(terrain::World& world, ColliderCacheOptions options = {});
  ~ColliderCache();
  ColliderCache(const ColliderCache&) = delete;
  ColliderCache& operator=(const ColliderCache&) = delete;

  /// The collider of `chunk` (possibly empty: a chunk that owns no triangle), pinned; it serves `use`
  /// (Collider::serves). Builds it on a miss: for contacts from the chunk's 12^3 box (World::readBox, the mesher with
  /// the wide apron, ColliderBuilder), for rays and box gathers from its 10^3 box without edge flags. A cached
  /// collider without edge flags is a miss for contacts. Errors: a chunk beyond physics' range (kOutOfRange,
  /// chunkInPhysicsRange), a `use` that is neither enumerator (kInvalidArgument).
  Result<Pin> acquire(terrain::ChunkCoord chunk, ColliderUse use = ColliderUse::kContacts);

  /// Whether a collider of `chunk` serving `use` is cached now: a peek (no build, no use recorded, not counted as a hit
  /// or miss). Thread-safe as acquire(); an edit or eviction may drop it right after.
  bool holds(terrain::ChunkCoord chunk, ColliderUse use = ColliderUse::kContacts) const;

  ColliderCacheStats stats() const;
  std::size_t byteBudget() const noexcept { return m_budget; }

  /// Checks the cache's bookkeeping; the error (kCorrupt) names the first broken invariant: every entry of the shards'
  /// maps once, under its own chunk in the shard its hash picks, found by a lookup, its bytes its collider's
  /// Collider::bytes() and that collider valid (Collider::validate); the LRU order holding exactly the maps' entries,
  /// each once under its stamp; the entry count; the byte total equal to the cached colliders' bytes plus those of
  /// colliders an edit or eviction dropped while pinned, and within the budget. Takes the cache's locks, but call it
  /// while no other thread acquires or edits the world: an acquire or edit between two of them may be seen halfway.
  /// O(cached bytes), for tests.
  Status validate() const;

 private:
  struct State;
  ColliderCache(terrain::World& world, ColliderCacheOptions options);
  static Result<std::unique_ptr<ColliderCache>> createChecked(terrain::World& world, ColliderCacheOptions options);
  // The world's listener: drops the colliders of the chunks the edit changed (all of them when it cannot allocate).
  void invalidate(std::span<const terrain::ChangeEvent> events) noexcept;
  // Takes an entry just erased from its shard's map off the LRU order and releases the cache's reference.
  void drop(Entry* entry) noexcept;
  void release(Entry* entry) noexcept;

  terrain::World& m_world;
  std::size_t m_budget;
  std::unique_ptr<State> m_state;
  terrain::Subscription m_subscription;
};

}  // namespace vtp::physics
