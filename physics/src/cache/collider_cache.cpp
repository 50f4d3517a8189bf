// The collider cache: 64 shards of chunk -> entry maps for lookups, an exact LRU order for eviction kept lazily (see
// Lru below), and entries reference-counted so that a pinned collider outlives its removal from the cache.
#include "vtp/physics/collider_cache.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cache/affected_chunks.h"
#include "cache/chunk_pointer_map.h"
#include "vtp/mesher/surface_mesher.h"
#include "vtp/physics/collider_builder.h"
#include "vtp/terrain/assert.h"

namespace vtp::physics {

using terrain::ChunkCoord;

namespace {

constexpr int kShardBits = 6;
constexpr int kShards = 1 << kShardBits;  // a shard per value of chunkHash's low bits

// Per thread: the mesher, the builder and the box buffers (no allocation after the first build on a thread).
struct BuildScratch {
  mesher::SurfaceMesher mesher;
  mesher::ChunkMesh mesh;
  ColliderBuilder builder;
  std::vector<terrain::Voxel> narrow = std::vector<terrain::Voxel>(std::size_t(mesher::boxVolume(mesher::kApron)));
  std::vector<terrain::Voxel> wide = std::vector<terrain::Voxel>(std::size_t(mesher::boxVolume(mesher::kWideApron)));
};

}  // namespace

// refs counts the cache's own reference (while the entry is in its shard's map) plus one per Pin; whoever drops it to
// zero frees the entry. Pins are only taken under the shard mutex while the entry is in the map, so an entry seen
// with refs == 1 under that mutex is unpinned and can be removed.
struct ColliderCache::Entry {
  ChunkCoord chunk;
  std::unique_ptr<Collider> collider;
  std::size_t bytes = 0;
  std::atomic<int> refs{0};
  std::atomic<std::uint64_t> last_use{0};
  std::uint64_t lru_stamp = 0;  // its key in the LRU order (under the eviction mutex)
  bool counted = false;         // its bytes are in State::bytes (false for overflow and stale builds)
  bool edge_flags = false;      // Collider::hasEdgeFlags(), kept here so a hit reads no more than the entry
  bool serves(ColliderUse use) const { return servesUse(edge_flags, use); }
};

struct ColliderCache::State {
  struct Shard {
    std::mutex mutex;
    ChunkPointerMap<Entry> map{kShardBits};
    std::uint64_t generation = 0;  // bumped by every invalidation in this shard
  };
  Shard shards[kShards];
  std::atomic<std::uint64_t> tick{0};
  std::atomic<std::size_t> bytes{0}, entries{0};
  // The part of `bytes` held by entries out of the maps but not yet freed (dropped while pinned), for validate().
  std::atomic<std::size_t> dropped_bytes{0};
  std::atomic<std::uint64_t> hits{0}, misses{0}, builds{0}, upgrades{0}, evictions{0}, invalidations{0},
      overflow_builds{0}, stale_builds{0}, out_of_memory_drops{0};
  // Exact LRU, kept lazily: every entry sits under the stamp of its last use as of its last visit here; a hit only
  // stores last_use. The front entry is the least recently used once its stamp equals its last_use (every other
  // entry's last_use is at least its own stamp, which is at least the front's); otherwise it is re-filed.
  std::mutex eviction_mutex;
  std::multimap<std::uint64_t, Entry*> lru;

  Shard& shardOf(ChunkCoord c) { return shards[terrain::chunkHash(c) & (kShards - 1)]; }
  // Takes entry e, just removed from its shard's map, off the LRU order (under the eviction mutex).
  void unlist(Entry* e) {
    auto [first, last] = lru.equal_range(e->lru_stamp);
    for (auto it = first; it != last; ++it) {
      if (it->second == e) {
        lru.erase(it);
        return;
      }
    }
  }
};

Result<std::unique_ptr<ColliderCache>> ColliderCache::createChecked(terrain::World& world, ColliderCacheOptions options) {
  if (options.byte_budget == 0 || options.byte_budget > (std::size_t(1) << 40)) {
    return Error{ErrorCode::kInvalidArgument, "ColliderCache: byte_budget must be in [1, 2^40]", {}};
  }
  return std::unique_ptr<ColliderCache>(new ColliderCache(world, options));
}

ColliderCache::ColliderCache(terrain::World& world, ColliderCacheOptions options)
    : m_world(world), m_budget(options.byte_budget), m_state(std::make_unique<State>()) {
  m_subscription = world.subscribe([this](std::span<const terrain::ChangeEvent> events) { invalidate(events); });
}

ColliderCache::~ColliderCache() {
  m_subscription.reset();
  for (State::Shard& shard : m_state->shards) {
    shard.map.forEach([](ChunkCoord, Entry* entry) { delete entry; });  // precondition: no Pin is alive
  }
}

void ColliderCache::release(Entry* entry) noexcept {
  if (entry->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (entry->counted) {
    m_state->bytes.fetch_sub(entry->bytes, std::memory_order_relaxed);
    m_state->dropped_bytes.fetch_sub(entry->bytes, std::memory_order_relaxed);
  }
  delete entry;
}

bool ColliderCache::holds(ChunkCoord chunk, ColliderUse use) const {
  State& s = *m_state;
  State::Shard& shard = s.shardOf(chunk);
  std::lock_guard lock(shard.mutex);
  const Entry* e = shard.map.find(chunk);
  return e != nullptr && e->serves(use);
}

Result<ColliderCache::Pin> ColliderCache::acquire(ChunkCoord chunk, ColliderUse use) {
  if (!chunkInPhysicsRange(chunk)) {
    return Error{ErrorCode::kOutOfRange, "ColliderCache::acquire: the chunk lies beyond 2^16 voxels of the origin", {}};
  }
  if (use != ColliderUse::kQueries && use != ColliderUse::kContacts) {
    return Error{ErrorCode::kInvalidArgument, "ColliderCache::acquire: unknown ColliderUse", {}};
  }
  State& s = *m_state;
  State::Shard& shard = s.shardOf(chunk);
  std::uint64_t generation;
  {
    std::lock_guard lock(shard.mutex);
    if (Entry* e = shard.map.find(chunk); e != nullptr && e->serves(use)) {
      e->refs.fetch_add(1, std::memory_order_relaxed);
      e->last_use.store(s.tick.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      s.hits.fetch_add(1, std::memory_order_relaxed);
      return Pin(this, e);
    }
    generation = shard.generation;
  }
  s.misses.fetch_add(1, std::memory_order_relaxed);

  // Build without locks (the world's reads are lock-free; an edit meanwhile bumps the shard's generation).
  static thread_local BuildScratch scratch;
  // For contacts the 12^3 box: the chunk's triangles and, for the edge flags, its neighbours' within one voxel. For
  // rays and gathers the 10^3 box, whose mesh owns the same triangles.
  const int apron = use == ColliderUse::kContacts ? mesher::kWideApron : mesher::kApron;
  std::vector<terrain::Voxel>& voxels = use == ColliderUse::kContacts ? scratch.wide : scratch.narrow;
  const terrain::VoxelBox box = terrain::grown(terrain::chunkBox(chunk), apron);
  // Between two edits: a box read while an edit publishes could mix two versions of its 27 chunks, a surface that was
  // never the world's.
  if (Status st = m_world.readBoxBetweenEdits(box, voxels); !st) return st.error();
  if (auto n = scratch.mesher.mesh(voxels, apron, scratch.mesh); !n) return n.error();
  auto built = scratch.builder.build(scratch.mesh, chunk, use);
  if (!built) return built.error();
  s.builds.fetch_add(1, std::memory_order_relaxed);
  auto* fresh = new Entry;
  fresh->chunk = chunk;
  fresh->bytes = (*built)->bytes();
  fresh->edge_flags = (*built)->hasEdgeFlags();
  fresh->collider = std::move(built.value());
  fresh->refs.store(1, std::memory_order_relaxed);  // the caller's pin

  // Before evicting anything: an edit since the lookup (the box may be older than the world: serve it, it was the
  // chunk at a published moment, but do not keep it), or another thread's build of the same chunk that serves this
  // use (use theirs). Checked again at insertion, since either can happen while room is made.
  auto stale_or_theirs = [&]() -> Entry* {
    if (shard.generation != generation) return fresh;
    if (Entry* found = shard.map.find(chunk); found != nullptr && found->serves(use)) {
      found->refs.fetch_add(1, std::memory_order_relaxed);
      return found;
    }
    return nullptr;
  };
  // The collider without edge flags this contact build replaces, if the chunk has one. It stays in the cache until
  // this one is inserted, so that it keeps serving rays if this one cannot be kept; this build holds a reference to it
  // meanwhile (refs 2 then means: in the cache, unpinned). Insertions hold the eviction mutex throughout, so no other
  // entry for the chunk appears meanwhile; an edit may drop it, which bumps the shard's generation.
  Entry* older = nullptr;
  auto drop_older = [&] {
    if (older != nullptr) release(older);
    older = nullptr;
  };
  // Whether this one fits, counting the bytes the older one gives back when it leaves unpinned. Pins are taken under
  // the shard mutex, so under it the answer holds until the insertion.
  auto fits = [&] {
    const std::size_t back = older != nullptr && older->refs.load(std::memory_order_acquire) == 2 ? older->bytes : 0;
    return s.bytes.load(std::memory_order_relaxed) + fresh->bytes <= m_budget + back;
  };
  auto overflow = [&] {
    drop_older();
    s.overflow_builds.fetch_add(1, std::memory_order_relaxed);
    return Pin(this, fresh, true);  // never inserted: freed with its pin
  };
  auto serve = [&](Entry* e) {
    drop_older();
    if (e == fresh) {
      s.stale_builds.fetch_add(1, std::memory_order_relaxed);
    } else {
      delete fresh;
    }
    return Pin(this, e, true);
  };
  {
    std::lock_guard lock(shard.mutex);
    if (Entry* e = stale_or_theirs()) return serve(e);
  }
  if (fresh->bytes > m_budget) {  // could never fit: do not empty the cache for it
    s.overflow_builds.fetch_add(1, std::memory_order_relaxed);
    return Pin(this, fresh, true);
  }
  std::lock_guard eviction(s.eviction_mutex);
  {
    std::lock_guard lock(shard.mutex);
    if (Entry* e = stale_or_theirs()) return serve(e);
    if (Entry* found = shard.map.find(chunk); found != nullptr) {  // one without edge flags: not `theirs`
      older = found;
      older->refs.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // Make room: evict from the LRU front, re-filing entries used since they were filed and skipping pinned ones (the
  // older collider among them: this build holds it).
  auto it = s.lru.begin();
  while (!fits() && it != s.lru.end()) {
    Entry* victim = it->second;
    const std::uint64_t used = victim->last_use.load(std::memory_order_relaxed);
    if (used != it->first) {
      victim->lru_stamp = used;
      s.lru.emplace(used, victim);
      it = s.lru.erase(it);
      continue;
    }
    State::Shard& vs = s.shardOf(victim->chunk);
    bool evicted = false;
    {
      std::lock_guard lock(vs.mutex);
      // Not in the map: an edit is dropping it right now and will take it off this list itself.
      if (vs.map.find(victim->chunk) == victim && victim->refs.load(std::memory_order_acquire) == 1) {
        vs.map.erase(victim->chunk);
        s.dropped_bytes.fetch_add(victim->bytes, std::memory_order_relaxed);
        evicted = true;
      }
    }
    if (!evicted) {
      ++it;
      continue;
    }
    it = s.lru.erase(it);
    s.entries.fetch_sub(1, std::memory_order_relaxed);
    s.evictions.fetch_add(1, std::memory_order_relaxed);
    release(victim);  // the cache's reference: frees it and its bytes
  }
  if (!fits()) return overflow();
  {
    std::lock_guard lock(shard.mutex);
    if (Entry* e = stale_or_theirs()) return serve(e);
    if (!fits()) return overflow();  // a reader pinned the older collider since
    if (older != nullptr) {  // still in the map: an edit dropping it would have changed the generation
      VTP_ASSERT(shard.map.find(chunk) == older, "the replaced collider is still in its shard's map");
      shard.map.erase(chunk);
      s.dropped_bytes.fetch_add(older->bytes, std::memory_order_relaxed);
      s.unlist(older);
      s.entries.fetch_sub(1, std::memory_order_relaxed);
      s.upgrades.fetch_add(1, std::memory_order_relaxed);
      release(older);  // the cache's reference
      drop_older();    // this build's: freed now unless pinned (then fits() did not count its bytes)
    }
    VTP_ASSERT(shard.map.find(chunk) == nullptr, "a chunk has one entry in its shard's map");
    fresh->refs.store(2, std::memory_order_relaxed);  // the cache's reference and the caller's pin
    fresh->counted = true;
    fresh->last_use.store(s.tick.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    fresh->lru_stamp = fresh->last_use.load(std::memory_order_relaxed);
    s.bytes.fetch_add(fresh->bytes, std::memory_order_relaxed);
    s.entries.fetch_add(1, std::memory_order_relaxed);  // before an edit can see it in the map and count it out
    shard.map.insert(chunk, fresh);
  }
  s.lru.emplace(fresh->lru_stamp, fresh);
  return Pin(this, fresh, true);
}

void ColliderCache::invalidate(std::span<const terrain::ChangeEvent> events) noexcept {
  State& s = *m_state;
  std::vector<ChunkCoord> chunks;
  try {
    chunks = affectedChunks(events, mesher::kWideApron);
  } catch (const std::bad_alloc&) {
    // Which colliders the edit changed is not known: drop them all (which allocates nothing), so none is stale.
    s.out_of_memory_drops.fetch_add(1, std::memory_order_relaxed);
    for (State::Shard& shard : s.shards) {
      for (;;) {
        Entry* e = nullptr;
        {
          std::lock_guard lock(shard.mutex);
          ++shard.generation;
          e = shard.map.any();
          if (e == nullptr) break;
          shard.map.erase(e->chunk);
        }
        drop(e);
      }
    }
    return;
  }
  for (const ChunkCoord c : chunks) {
    State::Shard& shard = s.shardOf(c);
    Entry* e = nullptr;
    {
      std::lock_guard lock(shard.mutex);
      ++shard.generation;
      e = shard.map.find(c);
      if (e == nullptr) continue;
      shard.map.erase(c);
    }
    drop(e);
  }
}

void ColliderCache::drop(Entry* e) noexcept {
  State& s = *m_state;
  s.dropped_bytes.fetch_add(e->bytes, std::memory_order_relaxed);
  {
    std::lock_guard eviction(s.eviction_mutex);
    s.unlist(e);
  }
  s.entries.fetch_sub(1, std::memory_order_relaxed);
  s.invalidations.fetch_add(1, std::memory_order_relaxed);
  release(e);  // freed now, or by its last pin
}

ColliderCacheStats ColliderCache::stats() const {
  const State& s = *m_state;
  ColliderCacheStats out;
  out.bytes = s.bytes.load();
  out.entries = s.entries.load();
  out.hits = s.hits.load();
  out.misses = s.misses.load();
  out.builds = s.builds.load();
  out.upgrades = s.upgrades.load();
  out.evictions = s.evictions.load();
  out.invalidations = s.invalidations.load();
  out.overflow_builds = s.overflow_builds.load();
  out.stale_builds = s.stale_builds.load();
  out.out_of_memory_drops = s.out_of_memory_drops.load();
  return out;
}

Status ColliderCache::validate() const {
  State& s = *m_state;
  auto broken = [](const std::string& what) -> Status {
    return Error{ErrorCode::kCorrupt, "ColliderCache::validate: " + what, {}};
  };
  auto text = [](ChunkCoord c) {
    return "chunk (" + std::to_string(c.x) + "," + std::to_string(c.y) + "," + std::to_string(c.z) + ")";
  };
  std::lock_guard eviction(s.eviction_mutex);
  // The maps, shard by shard (each under its mutex; the eviction mutex keeps insertions and evictions out).
  std::set<const Entry*> in_maps;
  std::size_t map_bytes = 0;
  for (int i = 0; i < kShards; ++i) {
    State::Shard& shard = s.shards[i];
    std::lock_guard lock(shard.mutex);
    Status bad;
    std::size_t n = 0;
    shard.map.forEach([&](ChunkCoord key, Entry* e) {
      ++n;
      if (!bad.ok()) return;
      if (&s.shardOf(key) != &shard) {
        bad = broken(text(key) + " is in shard " + std::to_string(i) + ", not the one its hash picks");
      } else if (shard.map.find(key) != e) {
        bad = broken("a lookup of " + text(key) + " does not find its entry");
      } else if (!in_maps.insert(e).second) {
        bad = broken("the entry of " + text(key) + " is in the maps twice");
      } else if (e->chunk != key || e->collider == nullptr || e->collider->chunk() != key) {
        bad = broken("the entry under " + text(key) + " is another chunk's, or holds no collider");
      } else if (!e->counted || e->bytes != e->collider->bytes()) {
        bad = broken("the entry of " + text(key) + " counts " + std::to_string(e->bytes) + " bytes (" +
                     (e->counted ? "counted" : "not counted") + "), its collider has " +
                     std::to_string(e->collider->bytes()));
      } else if (e->edge_flags != e->collider->hasEdgeFlags()) {
        bad = broken("the entry of " + text(key) + " misstates whether its collider has edge flags");
      } else if (e->refs.load() < 1 || e->last_use.load() < e->lru_stamp) {
        bad = broken("the entry of " + text(key) + " has no cache reference, or a last use before its LRU stamp");
      } else if (Status c = e->collider->validate(); !c) {
        bad = broken("the collider of " + text(key) + ": " + c.error().message);
      }
      map_bytes += e->bytes;
    });
    if (!bad) return bad;
    if (n != shard.map.size()) {
      return broken("shard " + std::to_string(i) + "'s map holds " + std::to_string(n) + " entries and counts " +
                    std::to_string(shard.map.size()));
    }
  }
  // The LRU order: the same entries, each once, under its stamp.
  std::set<const Entry*> listed;
  for (const auto& [stamp, e] : s.lru) {
    if (in_maps.count(e) == 0) return broken("an LRU entry (stamp " + std::to_string(stamp) + ") is in no map");
    if (!listed.insert(e).second) return broken("the entry of " + text(e->chunk) + " is in the LRU order twice");
    if (e->lru_stamp != stamp) {
      return broken("the entry of " + text(e->chunk) + " is filed under stamp " + std::to_string(stamp) +
                    ", its own is " + std::to_string(e->lru_stamp));
    }
  }
  if (listed.size() != in_maps.size()) {
    return broken("the LRU order holds " + std::to_string(listed.size()) + " entries, the maps " +
                  std::to_string(in_maps.size()));
  }
  if (s.entries.load() != in_maps.size()) {
    return broken("the entry count is " + std::to_string(s.entries.load()) + ", the maps hold " +
                  std::to_string(in_maps.size()));
  }
  // The byte total: the cached colliders' and the dropped but still pinned ones', within the budget.
  const std::size_t bytes = s.bytes.load(), dropped = s.dropped_bytes.load();
  if (bytes != map_bytes + dropped) {
    return broken("the byte total is " + std::to_string(bytes) + ", the cached colliders hold " +
                  std::to_string(map_bytes) + " and dropped pinned ones " + std::to_string(dropped));
  }
  if (bytes > m_budget) {
    return broken("the byte total " + std::to_string(bytes) + " exceeds the budget " + std::to_string(m_budget));
  }
  return {};
}

ColliderCache::Pin::Pin(Pin&& other) noexcept : m_cache(other.m_cache), m_entry(other.m_entry), m_built(other.m_built) {
  other.m_entry = nullptr;
}

ColliderCache::Pin& ColliderCache::Pin::operator=(Pin&& other) noexcept {
  if (this != &other) {
    if (m_entry != nullptr) m_cache->release(m_entry);
    m_cache = other.m_cache;
    m_entry = other.m_entry;
    m_built = other.m_built;
    other.m_entry = nullptr;
  }
  return *this;
}

ColliderCache::Pin::~Pin() {
  if (m_entry != nullptr) m_cache->release(m_entry);
}

const Collider* ColliderCache::Pin::get() const noexcept { return m_entry ? m_entry->collider.get() : nullptr; }

}  // namespace vtp::physics
