#include "vtp/mesher/mesh_candidates.h"

#include <algorithm>

namespace vtp::mesher {

std::vector<terrain::ChunkCoord> candidateChunks(const terrain::World& world) {
  std::vector<terrain::ChunkCoord> out;
  {
    auto guard = world.read();
    world.forEachChunk(guard, [&](terrain::ChunkCoord c, const terrain::Chunk&) {
      out.push_back(c);
      out.push_back({c.x - 1, c.y, c.z});
      out.push_back({c.x, c.y - 1, c.z});
      out.push_back({c.x, c.y, c.z - 1});
    });
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace vtp::mesher
