#pragma once
// The chunks an edit affects in physics: those whose 10^3 box (the chunk and a one-voxel apron, what the masks and the
// mesher read) meets a changed voxel, i.e. each changed box grown by one voxel, in chunks. One rule for the mask index
// and the collider cache.

#include <algorithm>
#include <span>
#include <vector>

#include "vtp/terrain/coords.h"
#include "vtp/terrain/world.h"

namespace vtp::physics {

/// The affected chunks of `events`, sorted and unique.
inline std::vector<terrain::ChunkCoord> affectedChunks(std::span<const terrain::ChangeEvent> events) {
  std::vector<terrain::ChunkCoord> out;
  for (const terrain::ChangeEvent& e : events) {
    const terrain::ChunkCoord lo = terrain::chunkOf({e.changed.min.x - 1, e.changed.min.y - 1, e.changed.min.z - 1});
    const terrain::ChunkCoord hi = terrain::chunkOf({e.changed.max.x, e.changed.max.y, e.changed.max.z});
    for (std::int32_t z = lo.z; z <= hi.z; ++z)
      for (std::int32_t y = lo.y; y <= hi.y; ++y)
        for (std::int32_t x = lo.x; x <= hi.x; ++x) out.push_back({x, y, z});
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace vtp::physics
