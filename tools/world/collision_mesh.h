#pragma once
// The collision triangles of a world region, gathered chunk by chunk with vtp::mesher::SurfaceMesher, in world
// coordinates and with shared vertices merged: what `vtp-world export-obj` writes and renders.

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "vtp/terrain/coords.h"
#include "vtp/terrain/status.h"
#include "vtp/terrain/world.h"

namespace vtp::tools::world {

/// Triangles of many chunks in one index space.
struct CollisionMesh {
  /// Distinct vertex positions. [Unit: 1/1024 voxel] in world coordinates: chunk origin * 1024 + the mesher's vertex.
  std::vector<std::array<std::int64_t, 3>> positions;
  /// Triangles as indices into `positions`, in the mesher's winding (normals out of the solid); chunks in ChunkCoord
  /// order, each chunk's triangles in the mesher's order.
  std::vector<std::array<std::uint32_t, 3>> triangles;
  /// Material id of each triangle.
  std::vector<std::uint8_t> materials;
  /// Chunks meshed (those that could own a triangle) and chunks that owned at least one.
  std::size_t chunks_meshed = 0;
  std::size_t surface_chunks = 0;
};

/// The chunks that can own a triangle: a chunk owns the edges whose lower voxel it holds, so only a stored chunk or
/// the chunk just below one along x, y or z (an all-air chunk under a solid one) can. Sorted, without duplicates, and
/// only chunks holding storable voxels.
std::vector<terrain::ChunkCoord> candidateChunks(const terrain::World& world);

/// Meshes every chunk whose voxels intersect `box` (all chunks when nullopt; the box is clipped to storage, so a box
/// reaching past the world is never an error) and keeps each chunk's owned triangles. Errors come from readBox or the
/// mesher only.
Result<CollisionMesh> collectCollisionMesh(const terrain::World& world, const std::optional<terrain::VoxelBox>& box);

}  // namespace vtp::tools::world
