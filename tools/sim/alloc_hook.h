#pragma once
// One allocation hook for both collision modes: how many bytes of terrain collision data are live, and their peak.
//
// The tool replaces the global operator new/delete (every variant) and routes Bullet's btAlignedAlloc through
// btAlignedAllocSetCustom, so every heap block made by vtp, by Bullet and by the tool passes through one counter.
// Each block carries a 16-byte header with its usable size and a tag: the tag of the TerrainScope active on this
// thread when the block was made (0 = none). A block is counted as long as it lives, whoever frees it and wherever
// that happens; untagged blocks are not counted. Each mode opens a TerrainScope with its own tag around everything
// that builds or queries terrain collision data:
//   - loading and indexing: vtp's TerrainPhysics (mask index, cache) and adapter; Bullet's meshes, BVHs, chunk objects
//     and their broadphase proxies (the world file load and the voxels themselves are shared by both designs and left
//     out: they are opened before the scope);
//   - every near-callback run for a pair with the terrain (colliders built on demand, manifolds, algorithms);
//   - edits with their upkeep (vtp masks and cache invalidation; Bullet re-meshing and BVH rebuilds);
//   - the per-step raycasts;
//   - the vtp mode's background collider prefetcher (its thread is tagged for good) and the contact pass's workers.
// Temporary scratch made and freed inside a scope counts only while it lives (it can raise the peak, honestly).
// Bullet's manifold and algorithm pools are made with the dispatcher, outside any scope, in both modes alike; a
// manifold or algorithm that overflows them inside a terrain pair's near-callback is counted.
// Peak = the most tagged bytes live at once, sampled at every tagged allocation.

#include <cstddef>
#include <cstdint>

namespace vtp::tools::sim {

/// Tags: 0 is "not terrain collision data"; a mode uses its own tag in [1, kMaxTags).
inline constexpr int kMaxTags = 4;

/// Routes Bullet's allocations through the hook (btAlignedAllocSetCustom). Call once, before any Bullet object exists.
void installBulletAllocationHook();

/// Live and peak bytes of blocks made under `tag`. [Unit: byte]
std::size_t taggedLiveBytes(int tag);
std::size_t taggedPeakBytes(int tag);
/// The tag new blocks on this thread get now.
int currentTag();
/// Tags every block this thread allocates from now on `tag` (a background thread that works for one mode alone).
void tagThisThread(int tag);
/// Restarts the peak at the current live bytes.
void resetTaggedPeak(int tag);

/// While alive, blocks allocated on this thread are tagged `tag` (nestable; restores the previous tag).
class TerrainScope {
 public:
  explicit TerrainScope(int tag) noexcept;
  ~TerrainScope();
  TerrainScope(const TerrainScope&) = delete;
  TerrainScope& operator=(const TerrainScope&) = delete;

 private:
  int m_previous;
};

}  // namespace vtp::tools::sim
