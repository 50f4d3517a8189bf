#pragma once
/// \file
/// Building colliders before they are needed, off the step's critical path: one background thread builds the chunks
/// a game server hands it (say, where moving bodies will be within the next quarter second:
/// BulletTerrain::prefetchCandidates) into a collider cache, so the step finds them there instead of building them
/// inside a body's contact search. A collider is a function of its chunk, so what the step computes is the same
/// whether a collider was prefetched or not; only where the build time is spent changes.
///
/// Thread-safety: request(), wait() and stats() may be called from any thread (one mutex); builds run on the
/// prefetcher's own thread concurrently with queries and edits, as any ColliderCache::acquire may.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "vtp/physics/collider_cache.h"
#include "vtp/terrain/coords.h"
#include "vtp/terrain/status.h"

namespace vtp::physics {

struct ColliderPrefetchStats {
  std::uint64_t requested = 0;  ///< Chunks handed over by request() (the replaced ones included).
  std::uint64_t built = 0;      ///< Colliders the prefetcher built.
  std::uint64_t held = 0;       ///< Chunks it found already cached (or another thread built meanwhile).
  std::uint64_t dropped = 0;    ///< Chunks a later request replaced before they were reached.
  std::uint64_t failed = 0;     ///< Builds that failed (out of range, out of memory, unreadable): the step retries.
  std::uint64_t cpu_ns = 0;     ///< CPU time of the prefetcher's thread. [Unit: ns]
};

class ColliderPrefetcher {
 public:
  /// Starts the thread; `on_thread_start` (when given) runs on it first, to name it, set its priority or affinity, or
  /// tag its allocations. `cache` must outlive the prefetcher. Errors: a thread the system would not start
  /// (kOutOfMemory).
  static Result<std::unique_ptr<ColliderPrefetcher>> create(ColliderCache& cache,
                                                            std::function<void()> on_thread_start = {});
  /// Stops after the build in progress and joins the thread.
  ~ColliderPrefetcher();
  ColliderPrefetcher(const ColliderPrefetcher&) = delete;
  ColliderPrefetcher& operator=(const ColliderPrefetcher&) = delete;

  /// Replaces the chunks still waiting by `chunks`, built in that order (those the cache holds are skipped). Returns
  /// at once. A chunk beyond physics' range, or one whose build fails, is counted in `failed` and skipped. May throw
  /// std::bad_alloc (nothing changes then).
  void request(std::span<const terrain::ChunkCoord> chunks);
  /// Blocks until nothing waits and no build runs.
  void wait();
  ColliderPrefetchStats stats() const;

 private:
  struct State;
  explicit ColliderPrefetcher(std::unique_ptr<State> state);
  std::unique_ptr<State> m_state;
};

}  // namespace vtp::physics
