#pragma once
// The chunks an edit affects in physics: those whose 10^3 box (the chunk and a one-voxel apron, what the masks and the
// mesher read) meets a changed voxel, i.e. the changed box grown by one voxel, in chunks. Appended to `out`.

#include <span>
#include <vector>

#include "vtp/terrain/coords.h"
#include "vtp/terrain/world.h"

namespace vtp::physics {

inline void appendAffectedChunks(const terrain::ChangeEvent& e, std::vector<terrain::ChunkCoord>& out) {
  const terrain::ChunkCoord lo = terrain::chunkOf({e.changed.min.x - 1, e.changed.min.y - 1, e.changed.min.z - 1});
  const terrain::ChunkCoord hi = terrain::chunkOf({e.changed.max.x, e.changed.max.y, e.changed.max.z});
  for (std::int32_t z = lo.z; z <= hi.z; ++z)
    for (std::int32_t y = lo.y; y <= hi.y; ++y)
      for (std::int32_t x = lo.x; x <= hi.x; ++x) out.push_back({x, y, z});
}

}  // namespace vtp::physics
