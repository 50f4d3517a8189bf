#pragma once
/// \file
/// The oracle for the physics mask tests: chunk masks computed voxel by voxel from the 27-neighbour rule in
/// vtp/physics/chunk_masks.h (not from the bit-parallel implementation), plus small helpers the mask tests share.

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "vtp/physics/chunk_masks.h"
#include "vtp/terrain/coords.h"
#include "vtp/terrain/voxel.h"
#include "vtp/terrain/world.h"

namespace vtp::test {

/// Side of a chunk's mask box (the chunk plus a 1-voxel apron). [Unit: voxel]
inline constexpr int kMaskBoxSide = 10;

/// Index of box voxel (x, y, z), each in 0..9, in readBox layout.
constexpr int maskBoxIndex(int x, int y, int z) { return x + kMaskBoxSide * (y + kMaskBoxSide * z); }

/// The 10^3 box of chunk c: its voxels plus a 1-voxel apron.
constexpr terrain::VoxelBox maskBoxOf(terrain::ChunkCoord c) {
  const terrain::VoxelCoord o = terrain::chunkOrigin(c);
  return {{o.x - 1, o.y - 1, o.z - 1}, {o.x + 9, o.y + 9, o.z + 9}};
}

/// Whether mask bit (x, y, z) (chunk-relative, 0..7) is set: bit x + 8 z of word y.
inline bool maskBit(const physics::SliceMask& m, int x, int y, int z) {
  return ((m[std::size_t(y)] >> (x + 8 * z)) & 1u) != 0;
}

/// Chunk masks by brute force: tag from counting solid-inside and water voxels of the whole box; for kMixed, bit
/// (x, y, z) set when any of the 27 box voxels around chunk voxel (x, y, z) is solid-inside (water), else all zero.
inline physics::ChunkMasks referenceMasks(std::span<const terrain::Voxel> box) {
  physics::ChunkMasks m;
  int solid = 0, water = 0;
  for (const terrain::Voxel v : box) {
    solid += terrain::isSolidInside(v) ? 1 : 0;
    water += terrain::isWater(v) ? 1 : 0;
  }
  const int all = kMaskBoxSide * kMaskBoxSide * kMaskBoxSide;
  if (solid == 0 && water == 0) {
    m.tag = physics::MaskTag::kEmpty;
    return m;
  }
  if (solid == all) {
    m.tag = physics::MaskTag::kFullSolid;
    return m;
  }
  if (water == all) {
    m.tag = physics::MaskTag::kFullWater;
    return m;
  }
  m.tag = physics::MaskTag::kMixed;
  for (int z = 0; z < 8; ++z) {
    for (int y = 0; y < 8; ++y) {
      for (int x = 0; x < 8; ++x) {
        bool any_solid = false, any_water = false;
        // Chunk voxel (x, y, z) is box voxel (x+1, y+1, z+1); its 27 neighbours are box voxels x..x+2 etc.
        for (int dz = 0; dz < 3; ++dz) {
          for (int dy = 0; dy < 3; ++dy) {
            for (int dx = 0; dx < 3; ++dx) {
              const terrain::Voxel v = box[std::size_t(maskBoxIndex(x + dx, y + dy, z + dz))];
              any_solid = any_solid || terrain::isSolidInside(v);
              any_water = any_water || terrain::isWater(v);
            }
          }
        }
        const std::uint64_t bit = std::uint64_t{1} << (x + 8 * z);
        if (any_solid) m.solid[std::size_t(y)] |= bit;
        if (any_water) m.water[std::size_t(y)] |= bit;
      }
    }
  }
  return m;
}

/// The 10^3 box of chunk c read from a world (fails the calling test when readBox fails).
inline std::vector<terrain::Voxel> readMaskBox(const terrain::World& world, terrain::ChunkCoord c) {
  std::vector<terrain::Voxel> box(std::size_t(kMaskBoxSide * kMaskBoxSide * kMaskBoxSide));
  REQUIRE(world.readBox(maskBoxOf(c), box).ok());
  return box;
}

inline const char* tagName(physics::MaskTag t) {
  switch (t) {
    case physics::MaskTag::kEmpty: return "EMPTY";
    case physics::MaskTag::kMixed: return "MIXED";
    case physics::MaskTag::kFullSolid: return "FULL_SOLID";
    case physics::MaskTag::kFullWater: return "FULL_WATER";
  }
  return "?";
}

/// Masks as text for failure messages: the tag and the 16 words in hex.
inline std::string describe(const physics::ChunkMasks& m) {
  std::string s = tagName(m.tag);
  char buf[24];
  s += " solid";
  for (const std::uint64_t w : m.solid) {
    std::snprintf(buf, sizeof buf, " %016llx", static_cast<unsigned long long>(w));
    s += buf;
  }
  s += " water";
  for (const std::uint64_t w : m.water) {
    std::snprintf(buf, sizeof buf, " %016llx", static_cast<unsigned long long>(w));
    s += buf;
  }
  return s;
}

}  // namespace vtp::test
