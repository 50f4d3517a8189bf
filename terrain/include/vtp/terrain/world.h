#pragma once
/// \file
/// The voxel world a game server loads, edits, queries and saves: a sparse map from ChunkCoord to immutable Chunk
/// versions (missing chunks are air).
///
/// Thread-safety contract
/// ----------------------
/// - Any number of threads may read (voxel, readBox, chunk, forEachChunk, snapshot, stats) at any time, including
///   while another thread edits. Reads never take a lock: chunk versions are immutable and published with one atomic
///   store, so a reader sees each chunk's old or new version, never a mix. Old versions are freed only once no reader
///   that could have seen them is still inside a read (epoch-based reclamation). At most 128 reads, ReadGuards and
///   WorldSnapshots are live at once; one more waits (yields) until one ends, so do not hold 128 guards on one thread
///   and read on another.
/// - Edits may come from any thread; they are serialised by an internal mutex, so at most one runs at a time.
/// - A read that spans several chunks is not a snapshot of the whole world: an edit may land between two chunks of
///   one readBox. Use snapshot() for a consistent whole-world view (saving does).
/// - Listeners run on the editing thread, inside the edit call, after the new versions are visible and after the
///   edit lock is released, one edit's events at a time in edit order, listeners in the order they subscribed (the
///   physics objects subscribe when created: a listener that queries them should subscribe after). The world a
///   listener reads may already hold the next edit too (another thread's, publishing meanwhile); readBoxBetweenEdits
///   and snapshot() see it between two edits. A listener may read, snapshot and save; it must not edit the world,
///   subscribe, or drop any Subscription of this world (it would deadlock), and must not throw (std::terminate).
///   While listeners run, other threads' subscribe() and Subscription::reset() wait, and so does the next edit's
///   return (its listeners run after these): keep listeners short.
/// - Destroying the World requires that no other thread is using it or any ReadGuard/WorldSnapshot of it.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "vtp/terrain/chunk.h"
#include "vtp/terrain/coords.h"
#include "vtp/terrain/edit.h"
#include "vtp/terrain/listeners.h"
#include "vtp/terrain/material_table.h"
#include "vtp/terrain/status.h"
#include "vtp/terrain/voxel.h"

namespace vtp::terrain {

class ChunkTable;
class EpochDomain;

/// Parameters fixed when a world is created.
struct WorldConfig {
  double voxel_size = 1.0;                              ///< World units per voxel; finite, in [1e-3, 1e3].
  MaterialTable materials = MaterialTable::defaults();  ///< Materials the world's voxels may use.
  EditLimits limits;                                    ///< Caps every edit is checked against.
};

/// Receives every edit's change events (sorted by chunk) on the editing thread before the edit returns.
using ChangeListener = std::function<void(std::span<const ChangeEvent>)>;

/// Counts and memory of the stored chunks.
struct WorldStats {
  std::size_t stored_chunks = 0;   ///< Chunks present in the map (non-air).
  std::size_t uniform_chunks = 0;  ///< Of those, stored as one value.
  std::size_t dense_chunks = 0;    ///< Of those, stored as 512 voxels.
  std::size_t chunk_bytes = 0;     ///< Heap bytes of all chunk versions. [Unit: byte]
  std::size_t table_bytes = 0;     ///< Heap bytes of the chunk map itself. [Unit: byte]
};

/// A consistent view of every stored chunk at one moment between edits, sorted by ChunkCoord. Keeps those versions
/// alive (and delays reclamation of newer garbage) while it exists, so keep it short-lived. Not copyable.
class WorldSnapshot {
 public:
  struct Entry {
    ChunkCoord coord;
    const Chunk* chunk;  ///< Never null.
  };
  WorldSnapshot(WorldSnapshot&&) noexcept;
  WorldSnapshot& operator=(WorldSnapshot&&) = delete;
  ~WorldSnapshot();
  std::span<const Entry> chunks() const noexcept { return m_entries; }

 private:
  friend class World;
  WorldSnapshot(const EpochDomain* domain, std::size_t slot, std::vector<Entry> entries);
  const EpochDomain* m_domain;
  std::size_t m_slot;
  std::vector<Entry> m_entries;
};

class World {
 public:
  /// Creates an empty world (all air). Fails with kUnsupportedCpu where the CPU lacks x86-64-v3, or
  /// kInvalidArgument for a bad config.
  static Result<std::unique_ptr<World>> create(WorldConfig config = {});
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  double voxelSize() const noexcept { return m_config.voxel_size; }
  const MaterialTable& materials() const noexcept { return m_config.materials; }
  const EditLimits& limits() const noexcept { return m_config.limits; }
  const WorldConfig& config() const noexcept { return m_config; }

  // --- Reads: any thread, lock-free --------------------------------------------------------------------------------

  /// Pins the current chunk versions for the guard's lifetime, so `chunk()` pointers stay valid. Cheap (one
  /// uncontended atomic exchange); hold one across a batch of reads. Not copyable; must not outlive the World.
  class ReadGuard {
   public:
    ReadGuard(ReadGuard&&) noexcept;
    ReadGuard& operator=(ReadGuard&&) = delete;
    ~ReadGuard();

   private:
    friend class World;
    explicit ReadGuard(const EpochDomain* domain);
    const EpochDomain* m_domain;
    std::size_t m_slot;
  };
  ReadGuard read() const;

  /// The voxel at v; air outside storage or in a missing chunk.
  Voxel voxel(VoxelCoord v) const;

  /// Copies the voxels of `box` into `out`, x fastest, then y, then z: out[(x-min.x) + sx*((y-min.y) + sy*(z-min.z))].
  /// Voxels outside storage read as air. kInvalidArgument when out.size() != box.volume() or the box is empty;
  /// kOutOfRange when a corner lies beyond |v| <= 2^29; kLimitExceeded when box.volume() exceeds kMaxReadVoxels or
  /// the box overlaps more than kMaxReadChunks chunks (whatever the edit limits: physics reads boxes of up to 32^3
  /// voxels in a world whose edits may be capped far lower). Hot path: a chunk plus a 1- or 2-voxel apron (10^3,
  /// 12^3) has its own fixed-size path.
  /// Lock-free; never allocates for boxes up to 8 chunks wide.
  Status readBox(const VoxelBox& box, std::span<Voxel> out) const;
  /// readBox at one moment between two edits, never partway through one that publishes several chunks: read again
  /// while an edit published during the read (a seqlock read on publishSequence; edits are short and serialised, so a
  /// read from a listener retries at most once). What physics reads chunk boxes with. Lock-free; errors as readBox.
  Status readBoxBetweenEdits(const VoxelBox& box, std::span<Voxel> out) const;
  /// The largest box readBox reads: a read pins the chunk versions it sees until it returns, so its length is capped,
  /// in voxels and in chunks (its work and scratch grow with both: a 1 x 1 x 2^24 box would overlap 2^21 chunks).
  static constexpr std::int64_t kMaxReadVoxels = std::int64_t(1) << 24;
  static constexpr std::int64_t kMaxReadChunks = std::int64_t(1) << 16;

  /// The current version of chunk c, or nullptr when it is air. Valid while `guard` lives.
  const Chunk* chunk(const ReadGuard& guard, ChunkCoord c) const;

  /// Version counter of chunk c: 0 if never stored; grows with every edit that changes it (also when it becomes air).
  std::uint64_t chunkVersion(ChunkCoord c) const;

  /// A sequence number that is odd while an edit is publishing its chunks and grows by 2 with every edit. A readBox
  /// that starts and ends with the same even value saw the world between two edits, not partway through one (read
  /// it before and after, as a seqlock reader does; readBoxBetweenEdits does).
  std::uint64_t publishSequence() const;

  /// Calls fn(coord, chunk) for every stored chunk, in no particular order. fn must not edit the world.
  void forEachChunk(const ReadGuard& guard, const std::function<void(ChunkCoord, const Chunk&)>& fn) const;

  /// Every stored chunk at one moment between edits, sorted. A seqlock walk, tried again while edits publish during
  /// it; after a few tries it waits for the running edit instead (never from a listener: while one runs, at most one
  /// other edit can publish, so its second try is clean).
  WorldSnapshot snapshot() const;

  WorldStats stats() const;

  // --- Edits: any thread, serialised ------------------------------------------------------------------------------
  // Each validates everything first: on error nothing changed. On success the new voxels are visible to every read
  // that starts after the call returns, and listeners have run. An allocation that fails while an edit is staged
  // (the process's memory limit) is kOutOfMemory, never an exception, and also changes nothing.

  /// One edit.
  Result<EditResult> apply(const EditCommand& edit);
  /// A batch, atomically: all validated (caps summed) before any is applied; later edits see earlier ones.
  Result<EditResult> apply(std::span<const EditCommand> batch);

  Result<EditResult> fillBox(const VoxelBox& box, std::uint8_t material);
  Result<EditResult> clearBox(const VoxelBox& box);
  Result<EditResult> fillSphere(Vec3d center, double radius, std::uint8_t material);
  Result<EditResult> clearSphere(Vec3d center, double radius);
  Result<EditResult> paintSphere(Vec3d center, double radius, std::uint8_t material);
  Result<EditResult> fillCylinder(Vec3d center, double radius, double height, std::uint8_t material);
  Result<EditResult> clearCylinder(Vec3d center, double radius, double height);
  Result<EditResult> replace(const VoxelBox& box, std::uint8_t from, std::uint8_t to);
  Result<EditResult> setVoxel(VoxelCoord at, Voxel value);
  Result<EditResult> writeRegion(const VoxelBox& box, std::span<const Voxel> voxels);

  /// Registers a listener for change events; it stays registered while the returned handle lives.
  [[nodiscard]] Subscription subscribe(ChangeListener listener);

 private:
  friend class WorldLoader;
  explicit World(WorldConfig config);
  // create() after the CPU check: validates the config and builds the world (x86-64-v3 code).
  static Result<std::unique_ptr<World>> createChecked(WorldConfig config);
  struct EditState;

  WorldConfig m_config;
  std::unique_ptr<EpochDomain> m_epochs;
  std::unique_ptr<ChunkTable> m_table;
  std::shared_ptr<ListenerRegistry<std::span<const ChangeEvent>>> m_listeners;
  std::unique_ptr<EditState> m_edit;
};

/// Validates a world config; kInvalidArgument naming the bad field.
Status validateConfig(const WorldConfig& config);

}  // namespace vtp::terrain
