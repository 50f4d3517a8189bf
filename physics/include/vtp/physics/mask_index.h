#pragma once
/// \file
/// The broadphase index of one world: the masks (chunk_masks.h) of every chunk whose 10^3 box holds a solid-inside
/// or water voxel, stored or not (an all-air chunk can own a cave ceiling's triangles), kept current through the
/// world's change events, and the overlap query that physics asks for each body.
///
/// Thread-safety: queries may run on any number of threads, concurrently with edits on the world; an edit updates
/// the index before the edit call returns (from the world's change listener), so a query that starts after an edit
/// returned always sees it. Queries take no lock while the index keeps its dense chunk grid (a query overlapping an
/// edit's update starts over); a few far entries (a voxel placed 30000 voxels away) sit in a table beside the grid
/// and keep it so (MaskIndexStats::lock_free). Entries spread too far for that, a huge box, masks() and stats() take
/// a readers' lock that the edit's update holds exclusively.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "vtp/physics/chunk_masks.h"
#include "vtp/physics/world_vec.h"
#include "vtp/terrain/coords.h"
#include "vtp/terrain/status.h"
#include "vtp/terrain/world.h"

namespace vtp::physics {

/// An axis-aligned box, closed. [Unit: world]
struct Aabb {
  WorldVec3 min, max;
};

/// One chunk a query box could touch.
struct ChunkTouch {
  terrain::ChunkCoord chunk;
  bool solid = false;  ///< The box may touch the chunk's solid surface (or lies in rock: tag kFullSolid).
  bool water = false;  ///< The box may touch the chunk's water.
  MaskTag tag = MaskTag::kMixed;
};

/// The answers of a batched query (MaskIndex::query over many boxes): box i's chunks in touches(i). Reuse one per
/// thread: its buffers grow to the largest batch and are then kept, so a steady stream of batches allocates nothing.
/// Not thread-safe: one query at a time writes it, and the next query invalidates the spans touches() returned.
class TouchBatch {
 public:
  /// Boxes answered by the last query.
  std::size_t boxes() const noexcept { return m_ends.size(); }
  /// Box `box`'s chunks (box < boxes()), as query() on that box alone gives them.
  std::span<const ChunkTouch> touches(std::size_t box) const noexcept {
    const std::size_t first = box == 0 ? 0 : m_ends[box - 1];
    return {m_touches.data() + first, m_ends[box] - first};
  }

 private:
  friend class MaskIndex;
  std::vector<ChunkTouch> m_touches;  // the answers, box by box; only the first m_ends.back() are meaningful
  std::vector<std::size_t> m_ends;    // where each box's answers end in m_touches
  std::vector<ChunkTouch> m_one;      // the answer of a box the batched walk leaves to query()
};

/// What one update of the index covered, for its listeners (MaskIndex::subscribe): the chunks whose masks it rebuilt,
/// sorted in (z, y, x) order, because the voxels in `changed` changed (one box per change event of the edit).
/// [Unit: voxel] for `changed`. The spans are valid only during the listener's call: copy what you keep.
struct IndexUpdate {
  std::span<const terrain::ChunkCoord> chunks;
  std::span<const terrain::VoxelBox> changed;
  /// The update could not allocate: the index is stale (its next query rebuilds it, or returns kOutOfMemory) and
  /// `chunks` may be incomplete, so a listener should re-evaluate everything it derived from the index.
  bool out_of_memory = false;
};

struct MaskIndexOptions {
  /// Above this many chunks in a query's range, the query walks the index's entries instead of the range, so a huge
  /// box costs at most one pass over the index. In (0, 2^24].
  std::int64_t max_range_chunks = 4096;
};

struct MaskIndexStats {
  std::size_t entries = 0;  ///< Chunks with a non-empty 10^3 box.
  std::size_t mixed = 0, full_solid = 0, full_water = 0;
  std::size_t mask_bytes = 0;   ///< Bytes of stored solid and water words (MIXED chunks; water words only where
                                ///< there is water; all-ones solid copies shared).
  std::size_t index_bytes = 0;  ///< Everything else: keys, tags, map slots and container slack (estimate).
  /// Whether queries take the lock-free path: the index keeps a dense grid over its entries, all but at most 64 far
  /// ones (`beside_grid`) kept in a table beside it. False when even that grid would be too large (entries spread
  /// over a huge range in many places): queries then take the shared lock.
  bool lock_free = false;
  std::size_t beside_grid = 0;  ///< Entries off the grid, in the table beside it.
  std::uint64_t recoveries = 0;  ///< Whole rebuilds after an edit's update could not allocate (MaskIndex::query).
};

class MaskIndex {
 public:
  /// Builds the index of every chunk of `world` and subscribes to its change events. The index must be destroyed
  /// before the world. Errors: a CPU without x86-64-v3 (kUnsupportedCpu), invalid options (kInvalidArgument).
  static Result<std::unique_ptr<MaskIndex>> create(terrain::World& world, MaskIndexOptions options = {});
  ~MaskIndex();
  MaskIndex(const MaskIndex&) = delete;
  MaskIndex& operator=(const MaskIndex&) = delete;

  /// The chunks `box` may touch solid or water in, each once, in (z, y, x) order, into `out` (cleared first; reuse it
  /// to avoid allocation). After an edit whose update could not allocate, the first query rebuilds the whole index
  /// (kOutOfMemory, `out` empty, when that cannot allocate either: the index stays stale and the next query tries
  /// again); mayOwnTriangles and mayHoldWater then answer true. The box is grown by one voxel (the mesher's spill bound) and mapped to the voxels whose
  /// centres lie inside it; a chunk is listed when a dilated mask bit of one of those voxels is set, or it is FULL.
  /// Errors: a non-finite coordinate or min > max on an axis (kInvalidArgument); a coordinate at or beyond 2^16 voxels
  /// from the origin (kOutOfRange: physics answers within |x| < 2^16 voxels, physics/README.md); `out` is then empty.
  Status query(const Aabb& box, std::vector<ChunkTouch>& out) const;

  /// query() for many boxes in one call, say every body of a physics step: box i's chunks in `out.touches(i)`, each
  /// list exactly what query(boxes[i]) returns. Cheaper per box than one call each: body-sized boxes share one
  /// lock-free pass over the index per 64 boxes and write their answers straight into `out`. Each box sees the index
  /// as it stood at some moment of the call; an edit that returned before the call is seen by every box.
  /// Errors: as query(), for the first invalid box, whose position the message gives; `out` then holds no boxes.
  /// Stack: about 19 KiB (the visit table of 64 boxes; measured with -fstack-usage, g++ 12), mind it on fibers.
  Status query(std::span<const Aabb> boxes, TouchBatch& out) const;

  /// The masks of one chunk (tag kEmpty when it has no entry).
  ChunkMasks masks(terrain::ChunkCoord chunk) const;
  /// Whether chunk `chunk` may own collision triangles: a MIXED entry with a solid bit (an EMPTY, FULL or water-only
  /// chunk owns none). A world ray asks it of every chunk it passes before touching the collider cache. Lock-free
  /// while the index keeps its grid, as query() is; a few nanoseconds, against masks()' lock and copy.
  bool mayOwnTriangles(terrain::ChunkCoord chunk) const;
  /// Whether chunk `chunk` may hold or border water: a FULL_WATER entry, or a MIXED one with a water bit (the masks
  /// are dilated). A water ray asks it of every chunk it passes before reading voxels. Lock-free as mayOwnTriangles.
  bool mayHoldWater(terrain::ChunkCoord chunk) const;

  /// A number that changes whenever the index's answers may change (every update, every rebuild; odd while one is
  /// being stored). An answer got after reading an even version V holds while version() still returns V: callers
  /// cache per-chunk answers with it.
  std::uint64_t version() const noexcept;

  MaskIndexStats stats() const;

  /// World units per voxel (the world's voxel_size).
  double voxelSize() const noexcept { return m_voxel_size; }
  /// The reciprocal the query converts world units to voxels with (exactReciprocal(voxelSize()), query_range.h).
  double voxelReciprocal() const noexcept { return m_voxel_reciprocal; }

  /// Calls `listener` after every update of the index, on the editing thread inside the edit call, once the new
  /// masks are visible to queries (a listener may query the index; PairTracker does). Listeners run in the order
  /// they subscribed, one update at a time, under the rules of the world's own listeners (world.h): they must not
  /// edit the world, subscribe here or drop a Subscription of this index, nor throw. The Subscription may outlive the index
  /// (it then does nothing), but what the listener uses must outlive the Subscription. May throw std::bad_alloc (nothing subscribed then).
  [[nodiscard]] terrain::Subscription subscribe(std::function<void(const IndexUpdate&)> listener);

  /// A walk for tests: every stored chunk's and its neighbours' masks equal a fresh build from the world, the stats
  /// agree, and the lock-free paths answer as the table does. kCorrupt naming the first broken rule. Call it while no
  /// edit runs; it costs a mask build per chunk.
  Status validate() const;

 private:
  struct State;
  MaskIndex(terrain::World& world, MaskIndexOptions options);
  // create() after the CPU check (x86-64-v3 code).
  static Result<std::unique_ptr<MaskIndex>> createChecked(terrain::World& world, MaskIndexOptions options);
  // The world's listener: rebuilds the masks of the chunks the edit changed; an update that cannot allocate marks the
  // index stale instead (recover()).
  void rebuild(std::span<const terrain::ChangeEvent> events) noexcept;
  // After an update that could not allocate: every candidate chunk read and stored again, under the exclusive lock.
  // kOutOfMemory (still stale) when that cannot allocate either.
  Status recover() const;
  // `answer` (a query) on an index that is not stale: recovered first when it is, and answered again when an update
  // failed while it ran. Returns what `answer` returns, or recover()'s error.
  template <class Answer>
  Status fresh(Answer&& answer) const;
  // mayOwnTriangles and mayHoldWater: `of_cell` on the chunk's grid cell (lock-free), else `of_masks` on its masks.
  template <class CellTest, class MasksTest>
  bool chunkMay(terrain::ChunkCoord chunk, CellTest&& of_cell, MasksTest&& of_masks) const;
  Status queryNow(const Aabb& box, std::vector<ChunkTouch>& out) const;
  Status queryNow(std::span<const Aabb> boxes, TouchBatch& out) const;

  terrain::World& m_world;
  MaskIndexOptions m_options;
  double m_voxel_size;
  double m_voxel_reciprocal;  // exactReciprocal(m_voxel_size), for the query's conversion (query_range.h)
  std::unique_ptr<State> m_state;
  std::shared_ptr<terrain::ListenerRegistry<const IndexUpdate&>> m_listeners;
  terrain::Subscription m_subscription;
};

}  // namespace vtp::physics
