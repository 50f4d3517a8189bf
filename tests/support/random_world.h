#pragma once
// Test helpers: seeded random worlds and voxels, and a brute-force copy of a world's content to compare against.

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "vtp/terrain/world.h"

namespace vtp::test {

/// A fresh world with the default config; fails the test if creation fails.
std::unique_ptr<terrain::World> makeWorld(terrain::WorldConfig config = {});

/// A random canonical voxel: air, water or a default solid, with random occupancy.
terrain::Voxel randomVoxel(std::mt19937_64& rng);

/// Fills `world` with `edits` random sphere/box/cylinder fills and clears inside `region`.
void randomEdits(terrain::World& world, const terrain::VoxelBox& region, int edits, std::mt19937_64& rng);

/// Every voxel of `box`, read one at a time with World::voxel (the brute-force oracle for readBox).
std::vector<terrain::Voxel> voxelsOneByOne(const terrain::World& world, const terrain::VoxelBox& box);

/// Every chunk within 1 (26-neighbourhood) of a stored chunk, sorted: the only chunks whose 10^3 box can hold
/// anything, and the only ones that can own triangles (the brute-force enumeration of the physics tests).
std::vector<terrain::ChunkCoord> chunksNearStored(const terrain::World& world);

/// Encoded world bytes (the content hash tests compare).
std::uint64_t contentHash(const terrain::World& world);

}  // namespace vtp::test
