#pragma once
// The chunks an edit affects in physics: those whose box (the chunk and an apron) meets a changed voxel, i.e. each
// changed box grown by the apron, in chunks. One rule for the mask index (the 10^3 box its masks read, apron 1) and
// the collider cache (the 12^3 box its colliders are meshed from for the edge flags, apron 2).

#include <algorithm>
#include <span>
#include <vector>

#include "vtp/terrain/coords.h"
#include "vtp/terrain/world.h"

namespace vtp::physics {

/// The chunks whose box with `apron` voxels around meets a voxel `events` changed, sorted and unique.
inline std::vector<terrain::ChunkCoord> affectedChunks(std::span<const terrain::ChangeEvent> events, int apron) {
  std::vector<terrain::ChunkCoord> out;
  for (const terrain::ChangeEvent& e : events) {
    const terrain::ChunkCoord lo =
        terrain::chunkOf({e.changed.min.x - apron, e.changed.min.y - apron, e.changed.min.z - apron});
    const terrain::ChunkCoord hi = terrain::chunkOf(
        {e.changed.max.x - 1 + apron, e.changed.max.y - 1 + apron, e.changed.max.z - 1 + apron});
    for (std::int32_t z = lo.z; z <= hi.z; ++z)
      for (std::int32_t y = lo.y; y <= hi.y; ++y)
        for (std::int32_t x = lo.x; x <= hi.x; ++x) out.push_back({x, y, z});
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace vtp::physics
