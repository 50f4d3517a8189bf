#pragma once
/// \file
/// Which chunks of a world can own triangles, by the ownership rule of surface_mesher.h: a chunk owns the edges whose
/// lower voxel it holds, so besides the stored chunks, the chunk just below a stored one along x, y or z can own
/// triangles even when it stores only air (a cave ceiling above it, a wall beside it).

#include <vector>

#include "vtp/terrain/coords.h"
#include "vtp/terrain/world.h"

namespace vtp::mesher {

/// Every chunk that can own a triangle: each stored chunk and the chunks at -1 along x, y and z from it; sorted in
/// (z, y, x) order, unique. A superset of the chunks that do own triangles. Thread-safe like World reads.
std::vector<terrain::ChunkCoord> candidateChunks(const terrain::World& world);

}  // namespace vtp::mesher
