#pragma once
/// \file
/// The materials generated worlds use: the default table (2 rock, 3 dirt, 4 sand, 5 grass, 6 ore; terrain/README.md)
/// plus two more ore kinds, so veins come in several materials.

#include <cstdint>

#include "vtp/terrain/material_table.h"

namespace vtp::worldgen {

/// Material ids written by the generator. 0 air and 1 water are the reserved ids of vtp/terrain/voxel.h.
inline constexpr std::uint8_t kRock = 2;   ///< Bedrock, cliffs, the rim, everything deep.
inline constexpr std::uint8_t kDirt = 3;   ///< A few voxels under grass.
inline constexpr std::uint8_t kSand = 4;   ///< Lake and river beds and their shores.
inline constexpr std::uint8_t kGrass = 5;  ///< The top voxels of open ground.
inline constexpr std::uint8_t kOre = 6;    ///< Deep veins (the default table's "ore").
inline constexpr std::uint8_t kCoal = 7;   ///< Shallow veins ("coal", defined by worldgenMaterials()).
inline constexpr std::uint8_t kIron = 8;   ///< Middle-depth veins ("iron", defined by worldgenMaterials()).

/// MaterialTable::defaults() with 7 "coal" and 8 "iron" added. Every generated world file carries this table.
terrain::MaterialTable worldgenMaterials();

}  // namespace vtp::worldgen
