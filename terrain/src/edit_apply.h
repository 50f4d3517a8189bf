#pragma once
// Turning edit commands into new chunk contents: validation against the world's config, and a staging area that
// holds the edited copy of every chunk an edit (or batch) touches until the World publishes them all.

#include <array>
#include <functional>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "vtp/terrain/chunk.h"
#include "vtp/terrain/edit.h"
#include "vtp/terrain/status.h"
#include "vtp/terrain/world.h"

namespace vtp::terrain {

/// Checks one edit against the config; on success returns the voxel box it may touch (what the caps count).
Result<VoxelBox> validateEdit(const EditCommand& edit, const WorldConfig& config);

/// Hash of a chunk coordinate for the editor's sets and maps (ChunkTable's).
struct ChunkKeyHash {
  std::size_t operator()(const ChunkCoord& c) const;
};

/// A batch's validated touched boxes and their totals against the caps on voxels touched and chunks overlapped
/// (EditLimits): add each edit's box in order; the first box that takes a total over its cap gets the error. Voxels
/// are summed over the edits; chunks are counted once however many edits overlap them (what the batch stages), so a
/// script of 10^5 single-voxel sets in a few chunks passes. The summed chunk counts bound the distinct ones, so the
/// distinct chunks are only counted (one set insertion per chunk) once the sum passes the cap: a batch under it, a
/// single player's edit above all, costs no set. World::apply and applyEditScript count with it, so both refuse the
/// same edit.
class BatchTotals {
 public:
  BatchTotals(const EditLimits& limits, std::size_t edits) : m_limits(limits) { m_boxes.reserve(edits); }
  Status add(const VoxelBox& touched);
  /// The boxes added, in order.
  const std::vector<VoxelBox>& boxes() const noexcept { return m_boxes; }

 private:
  Status countDistinct(const VoxelBox& box);
  const EditLimits& m_limits;
  std::vector<VoxelBox> m_boxes;
  // Each edit adds at most 2^32 of either (validateEdit) and the first total over 2^34 stops the batch.
  std::int64_t m_voxels = 0, m_chunk_sum = 0;
  std::unordered_set<ChunkCoord, ChunkKeyHash> m_distinct;  // filled once m_chunk_sum passes the cap
};

/// Edited copies of chunks, keyed by coordinate. Editor-thread only.
class EditStaging {
 public:
  /// Reads a chunk's current published version (null = air); valid until the staging is published.
  using ChunkSource = std::function<const Chunk*(ChunkCoord)>;
  explicit EditStaging(ChunkSource source) : m_source(std::move(source)) {}

  /// Applies a validated edit whose touched box is `touched` to the staged copies.
  void apply(const EditCommand& edit, const VoxelBox& touched);

  struct Staged {
    const Chunk* original = nullptr;
    std::array<Voxel, kChunkVolume> voxels;
  };
  /// Every touched chunk with its edited voxels, sorted by coordinate.
  std::vector<std::pair<ChunkCoord, const Staged*>> sorted() const;

  /// Voxels of the chunk that differ from its original, as a box in world voxels (empty if none).
  static VoxelBox diffBox(ChunkCoord c, const Staged& staged);

 private:
  Staged& stage(ChunkCoord c);
  // Visits every voxel of `box` chunk by chunk: fn(staged voxel, world coordinate).
  template <class Fn>
  void forEachVoxel(const VoxelBox& box, Fn&& fn);
  ChunkSource m_source;
  std::unordered_map<ChunkCoord, std::unique_ptr<Staged>, ChunkKeyHash> m_chunks;
};

}  // namespace vtp::terrain
