#pragma once
/// \file
/// Body-chunk pairs: for each body (an id the caller owns) the chunks its box may touch solid or water in, kept as
/// the body moves and as the terrain changes. This is what contact generation iterates, and what tells a game server
/// "this body entered water".

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vtp/physics/mask_index.h"

namespace vtp::physics {

/// Which surface a pair is about.
enum class PairKind : std::uint8_t { kSolid, kWater };

/// One body-chunk pair. At most one per (body, chunk, kind).
struct Pair {
  std::uint64_t body = 0;
  terrain::ChunkCoord chunk;
  PairKind kind = PairKind::kSolid;
  friend bool operator==(const Pair&, const Pair&) = default;
};

/// What changed: pairs added and removed, and (from edits) bodies to wake because the terrain changed within one voxel
/// of their box. Each body's changes are sorted by chunk in (z, y, x) order, then kind; a batched update lists body by
/// body, takeEditChanges() bodies in id order, `woken` sorted and unique. Every list is relative to what the calls
/// before it reported (update, remove and takeEditChanges alike), so a caller that applies them in the order it got
/// them holds exactly the pairs reported so far, whatever edits ran between its calls: an edit's change to a body is
/// held back until takeEditChanges() or the body's next update(), whichever comes first, and reported once (a pair
/// an edit added and a later one removed is not reported at all).
struct PairChanges {
  std::vector<Pair> added;
  std::vector<Pair> removed;
  std::vector<std::uint64_t> woken;
  void clear() {
    added.clear();
    removed.clear();
    woken.clear();
  }
};

/// A body's new box, for a batched update.
struct BodyBox {
  std::uint64_t body = 0;
  Aabb box;  ///< [Unit: world]
};

/// Tracks pairs over one MaskIndex. Thread-safety: all members may be called from any thread; an edit on the world
/// re-evaluates the affected bodies from inside the edit call (before it returns), and their changes wait for
/// takeEditChanges() or each body's next update(). Must be destroyed before its MaskIndex.
///
/// Out of memory: when an edit's re-evaluation (or the index's update) cannot allocate, the tracker is marked stale and
/// the next update() or takeEditChanges() re-evaluates every body (and reports every body woken); when that cannot
/// allocate either, it returns kOutOfMemory, changes nothing it reported, and the next call tries again.
class PairTracker {
 public:
  explicit PairTracker(MaskIndex& index);
  ~PairTracker();
  PairTracker(const PairTracker&) = delete;
  PairTracker& operator=(const PairTracker&) = delete;

  /// Sets body's box (world units) and reports the pairs this adds and removes into `changes` (cleared first).
  /// A new id starts a body. Errors: a non-finite box or min > max (kInvalidArgument), a box reaching 2^16 voxels
  /// from the origin (kOutOfRange): nothing changes.
  Status update(std::uint64_t body, const Aabb& box, PairChanges& changes);

  /// update() for many bodies in one call, say every body that moved in a physics step, with one batched index query
  /// (MaskIndex's) instead of one each. An id given more than once takes its last box. `changes` (cleared first)
  /// lists each body's changes once, bodies in the order of their last entries, each body's sorted as update()'s are.
  /// Errors: as update(), for the first invalid box (duplicates included), whose position the message gives: then
  /// nothing changes.
  Status update(std::span<const BodyBox> bodies, PairChanges& changes);

  /// Forgets a body; its pairs are reported removed into `changes` (cleared first). Unknown ids are ignored.
  void remove(std::uint64_t body, PairChanges& changes);

  /// Reports into `changes` (cleared first) what edits changed for bodies not reported since (by this call or their
  /// update()), and the bodies edits woke since the last call.
  /// Errors: kOutOfMemory (nothing reported; try again), see below.
  Status takeEditChanges(PairChanges& changes);

  /// The body's current pairs, sorted; empty for an unknown id. They may be ahead of what the calls above reported
  /// (an edit's changes wait for takeEditChanges() or the body's next update()).
  std::vector<Pair> pairs(std::uint64_t body) const;

  std::size_t bodyCount() const;

 private:
  struct Body;
  // The index's listener: re-evaluates the bodies the update's chunks may change, inside the edit call; marks the
  // tracker stale when it cannot allocate.
  void indexRebuilt(const IndexUpdate& update) noexcept;
  void reevaluate(const IndexUpdate& update);
  // When stale: every body re-queried, listed unreported where its touches changed, and woken. Caller holds m_mutex.
  Status recoverLocked();
  // Re-queries one body's touches (marking the tracker stale when the index cannot answer). Caller holds m_mutex (so
  // do the two below).
  void requery(Body& body);
  // Sets the body's touches from `touches` (a query's answer for its box).
  void setTouches(Body& body, std::span<const ChunkTouch> touches);
  // Appends the differences between what was reported for the body and its touches, and makes them the reported.
  void report(std::uint64_t id, Body& body, PairChanges& changes);
  // The body of `id`, started when new. Caller holds m_mutex.
  Body& bodyOf(std::uint64_t id);

  MaskIndex& m_index;
  mutable std::mutex m_mutex;
  std::unordered_map<std::uint64_t, std::unique_ptr<Body>> m_bodies;
  std::vector<std::uint64_t> m_unreported;  // bodies an edit changed since they were last reported
  std::vector<std::uint64_t> m_woken;       // bodies edits woke since the last takeEditChanges
  bool m_stale = false;                     // an edit's re-evaluation could not allocate (recoverLocked)
  std::atomic<bool> m_edit_pending{false};  // an edit ran since the last takeEditChanges (its fast path)
  std::vector<ChunkTouch> m_scratch;                                 // query results, reused
  std::vector<Aabb> m_boxes;                                         // a batched update's boxes, reused
  std::vector<std::size_t> m_last;                                   // its entries that count, reused
  TouchBatch m_batch;                                                // its query results, reused
  terrain::Subscription m_subscription;  // last: unsubscribed first, before the members the listener uses go
};

}  // namespace vtp::physics
