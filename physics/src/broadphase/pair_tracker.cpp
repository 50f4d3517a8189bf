#include "vtp/physics/pair_tracker.h"

#include <algorithm>

#include "broadphase/query_range.h"

namespace vtp::physics {

using terrain::ChunkCoord;

namespace {
constexpr std::uint8_t kSolidBit = 1, kWaterBit = 2;

bool sameVoxels(const QueryRange& a, const QueryRange& b) {
  return a.empty == b.empty && std::equal(a.lo, a.lo + 3, b.lo) && std::equal(a.hi, a.hi + 3, b.hi);
}
}  // namespace

struct PairTracker::Body {
  Aabb box;
  // The voxels the box maps to (query_range.h), which alone decide the index's answer for it; `queried` once set.
  QueryRange range;
  bool queried = false;
  // The chunks the body's box touches, sorted (z, y, x), with which surfaces (kSolidBit | kWaterBit): as the index
  // answers now, and as the caller was last told (what it holds if it applied every change in the order it got them).
  std::vector<std::pair<ChunkCoord, std::uint8_t>> touches, reported;
  bool unreported = false;  // an edit changed `touches` since the last report
};

PairTracker::PairTracker(MaskIndex& index)
    : m_index(index), m_subscription(index.subscribe([this](const IndexUpdate& update) { indexRebuilt(update); })) {}

PairTracker::~PairTracker() { m_subscription.reset(); }

void PairTracker::requery(Body& body) {
  // Boxes are validated on entry: only an index out of memory fails, and then every body is re-evaluated later.
  if (!m_index.query(body.box, m_scratch).ok()) {
    m_stale = true;
    m_edit_pending.store(true, std::memory_order_release);
    return;
  }
  setTouches(body, m_scratch);
}

Status PairTracker::recoverLocked() {
  if (!m_stale) return {};
  try {
    std::vector<std::uint64_t> ids;
    ids.reserve(m_bodies.size());
    for (const auto& [id, body] : m_bodies) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    for (const std::uint64_t id : ids) {
      Body& body = *m_bodies[id];
      if (Status s = m_index.query(body.box, m_scratch); !s) return s;
      setTouches(body, m_scratch);
      body.queried = false;
      if (body.touches != body.reported && !body.unreported) {
        body.unreported = true;
        m_unreported.push_back(id);
      }
    }
    // The edits whose changes were lost may have woken any body.
    m_woken.insert(m_woken.end(), ids.begin(), ids.end());
    std::sort(m_woken.begin(), m_woken.end());
    m_woken.erase(std::unique(m_woken.begin(), m_woken.end()), m_woken.end());
  } catch (const std::bad_alloc&) {
    return Error{ErrorCode::kOutOfMemory, "PairTracker: out of memory re-evaluating the bodies after an edit", {}};
  }
  m_stale = false;
  return {};
}

void PairTracker::setTouches(Body& body, std::span<const ChunkTouch> touches) {
  body.touches.clear();
  for (const ChunkTouch& t : touches) {
    body.touches.push_back({t.chunk, std::uint8_t((t.solid ? kSolidBit : 0) | (t.water ? kWaterBit : 0))});
  }
}

void PairTracker::report(std::uint64_t id, Body& body, PairChanges& changes) {
  // Merge the two sorted lists; per chunk, the bits only in `touches` are added and those only in `reported` removed.
  auto emit = [&](std::vector<Pair>& list, ChunkCoord c, unsigned bits) {
    if (bits & kSolidBit) list.push_back({id, c, PairKind::kSolid});
    if (bits & kWaterBit) list.push_back({id, c, PairKind::kWater});
  };
  const auto& old = body.reported;
  const auto& now = body.touches;
  auto old_it = old.begin();
  auto new_it = now.begin();
  while (old_it != old.end() || new_it != now.end()) {
    if (new_it == now.end() || (old_it != old.end() && old_it->first < new_it->first)) {
      emit(changes.removed, old_it->first, old_it->second);
      ++old_it;
    } else if (old_it == old.end() || new_it->first < old_it->first) {
      emit(changes.added, new_it->first, new_it->second);
      ++new_it;
    } else {
      emit(changes.added, new_it->first, unsigned(new_it->second & ~old_it->second));
      emit(changes.removed, old_it->first, unsigned(old_it->second & ~new_it->second));
      ++old_it;
      ++new_it;
    }
  }
  body.reported = body.touches;  // the capacity is kept: no allocation per update in steady state
  body.unreported = false;
}

Status PairTracker::update(std::uint64_t id, const Aabb& box, PairChanges& changes) {
  changes.clear();
  const Result<QueryRange> range =
      queryRange(box, m_index.voxelSize(), m_index.voxelReciprocal(), "PairTracker::update");
  if (!range) return range.error();
  std::lock_guard lock(m_mutex);
  if (Status s = recoverLocked(); !s) return s;
  Body& body = bodyOf(id);
  body.box = box;
  // The same voxels as last time: the index answers as it did (edits since re-queried the body), so when nothing is
  // waiting to be reported, nothing changed. A resting or slow body costs no query.
  if (body.queried && !body.unreported && sameVoxels(body.range, *range)) return {};
  body.queried = false;  // until the answer is reported: a failure on the way leaves the next update to query again
  requery(body);
  if (m_stale)  // the index could not answer
    return Error{ErrorCode::kOutOfMemory, "PairTracker::update: the mask index is out of memory", {}};
  report(id, body, changes);
  body.range = *range;
  body.queried = true;
  return {};
}

Status PairTracker::update(std::span<const BodyBox> bodies, PairChanges& changes) {
  changes.clear();
  // Every box checked first, so an invalid one changes nothing.
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const Result<QueryRange> range =
        queryRange(bodies[i].box, m_index.voxelSize(), m_index.voxelReciprocal(), "PairTracker::update");
    if (!range) return inBatch(range.error(), i);
  }
  std::lock_guard lock(m_mutex);
  if (Status s = recoverLocked(); !s) return s;
  // Each id's last entry, in the order of those entries: sorted by (id, position), the last of each id kept.
  std::vector<std::size_t>& last = m_last;
  last.resize(bodies.size());
  for (std::size_t i = 0; i < last.size(); ++i) last[i] = i;
  std::sort(last.begin(), last.end(), [&](std::size_t a, std::size_t b) {
    return bodies[a].body != bodies[b].body ? bodies[a].body < bodies[b].body : a < b;
  });
  std::size_t kept = 0;
  for (std::size_t k = 0; k < last.size(); ++k) {
    if (k + 1 == last.size() || bodies[last[k + 1]].body != bodies[last[k]].body) last[kept++] = last[k];
  }
  last.resize(kept);
  std::sort(last.begin(), last.end());
  // Queried under the lock, like update()'s: an edit re-evaluating bodies waits, so no answer goes stale.
  m_boxes.clear();
  for (const std::size_t i : last) m_boxes.push_back(bodies[i].box);
  if (Status s = m_index.query(m_boxes, m_batch); !s) return s;  // the boxes were checked: never fails
  for (std::size_t k = 0; k < last.size(); ++k) {
    const BodyBox& b = bodies[last[k]];
    Body& body = bodyOf(b.body);
    body.box = b.box;
    body.queried = false;  // the batch keeps no ranges; the next single update queries again
    setTouches(body, m_batch.touches(k));
    report(b.body, body, changes);
  }
  return {};
}

PairTracker::Body& PairTracker::bodyOf(std::uint64_t id) {
  std::unique_ptr<Body>& body = m_bodies[id];
  if (!body) body = std::make_unique<Body>();
  return *body;
}

void PairTracker::remove(std::uint64_t id, PairChanges& changes) {
  changes.clear();
  std::lock_guard lock(m_mutex);
  auto it = m_bodies.find(id);
  if (it == m_bodies.end()) return;
  for (const auto& [chunk, bits] : it->second->reported) {  // what the caller holds
    if (bits & kSolidBit) changes.removed.push_back({id, chunk, PairKind::kSolid});
    if (bits & kWaterBit) changes.removed.push_back({id, chunk, PairKind::kWater});
  }
  m_bodies.erase(it);
}

Status PairTracker::takeEditChanges(PairChanges& changes) {
  changes.clear();
  // No edit since the last call (the listener sets the flag before its edit returns): nothing to take, no lock.
  if (!m_edit_pending.load(std::memory_order_acquire)) return {};
  std::lock_guard lock(m_mutex);
  if (Status s = recoverLocked(); !s) return s;  // still pending
  std::sort(m_unreported.begin(), m_unreported.end());
  m_unreported.erase(std::unique(m_unreported.begin(), m_unreported.end()), m_unreported.end());
  for (const std::uint64_t id : m_unreported) {
    const auto it = m_bodies.find(id);
    if (it != m_bodies.end() && it->second->unreported) report(id, *it->second, changes);  // else reported since
  }
  m_unreported.clear();
  std::swap(changes.woken, m_woken);
  m_edit_pending.store(false, std::memory_order_relaxed);  // all taken; under the lock, which the listener takes too
  return {};
}

std::vector<Pair> PairTracker::pairs(std::uint64_t id) const {
  std::vector<Pair> out;
  std::lock_guard lock(m_mutex);
  auto it = m_bodies.find(id);
  if (it == m_bodies.end()) return out;
  for (const auto& [chunk, bits] : it->second->touches) {
    if (bits & kSolidBit) out.push_back({id, chunk, PairKind::kSolid});
    if (bits & kWaterBit) out.push_back({id, chunk, PairKind::kWater});
  }
  return out;
}

std::size_t PairTracker::bodyCount() const {
  std::lock_guard lock(m_mutex);
  return m_bodies.size();
}

void PairTracker::indexRebuilt(const IndexUpdate& update) noexcept {
  std::lock_guard lock(m_mutex);
  m_edit_pending.store(true, std::memory_order_release);
  if (update.out_of_memory) {
    m_stale = true;  // the update's chunks may be incomplete: every body is re-evaluated on the next call
    return;
  }
  try {
    reevaluate(update);
  } catch (const std::bad_alloc&) {
    m_stale = true;
  }
}

void PairTracker::reevaluate(const IndexUpdate& update) {
  const double vs = m_index.voxelSize();
  // Bodies in id order, so the queued changes do not depend on the hash map's layout.
  std::vector<std::uint64_t> ids;
  ids.reserve(m_bodies.size());
  for (const auto& [id, body] : m_bodies) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  std::vector<std::uint64_t> woken;
  for (std::uint64_t id : ids) {
    Body& body = *m_bodies[id];
    // Re-evaluate when a rebuilt chunk lies in the body's query range: only then can its query answer change.
    const Result<QueryRange> range = queryRange(body.box, vs, m_index.voxelReciprocal(), "PairTracker");
    if (range && !range->empty) {
      if (std::ranges::any_of(update.chunks, [&](ChunkCoord c) { return range->containsChunk(c); })) {
        requery(body);
        if (body.touches != body.reported && !body.unreported) {
          body.unreported = true;  // reported by takeEditChanges() or the body's next update()
          m_unreported.push_back(id);
        }
      }
    }
    // Wake it when the terrain changed within one voxel of its box (closed boxes: touching counts).
    const bool near = std::ranges::any_of(update.changed, [&](const terrain::VoxelBox& v) {
      return body.box.min.x - vs <= v.max.x * vs && body.box.max.x + vs >= v.min.x * vs &&
             body.box.min.y - vs <= v.max.y * vs && body.box.max.y + vs >= v.min.y * vs &&
             body.box.min.z - vs <= v.max.z * vs && body.box.max.z + vs >= v.min.z * vs;
    });
    if (near) woken.push_back(id);
  }
  // Several edits may wake a body between two takeEditChanges calls; list it once.
  auto& all = m_woken;
  all.insert(all.end(), woken.begin(), woken.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
}

}  // namespace vtp::physics
