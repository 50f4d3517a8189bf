#pragma once
// A ray prepared once for a walk over many chunks (TerrainPhysics' world rays): prepareWorldFrameRay does what
// prepareRay does, once, in the world's grid frame, and rayInChunk shifts the result to each chunk with a few integer
// operations. The ChunkRay it gives equals prepareRay's for that chunk, bit for bit (prepareRay shifts the same way).
#include <array>
#include <cstdint>

#include "vtp/physics/collider.h"

namespace vtp::physics {

struct WorldFrameRay {
  ChunkRay ray;  ///< Prepared for chunk (0, 0, 0).
  std::array<std::int32_t, 4> segment_min{}, segment_max{};  ///< The segment's grid bounds, grown by 2 (lanes 0-2).
};

/// prepareRay's checks and work, in the world's grid frame. Errors as prepareRay's.
Status prepareWorldFrameRay(const Ray& ray, double voxel_size, WorldFrameRay& out);
/// The ray as prepareRay(ray, chunk, ...) gives it. Errors: a chunk beyond physics range (kOutOfRange).
Status rayInChunk(const WorldFrameRay& ray, terrain::ChunkCoord chunk, ChunkRay& out);

}  // namespace vtp::physics
