#pragma once
// Test helpers: the material ids of MaterialTable::defaults() (terrain/README.md) and the full rock voxel the tests
// build their worlds from. 0 air and 1 water are terrain::kAirMaterial and terrain::kWaterMaterial (voxel.h).

#include <cstdint>

#include "vtp/terrain/voxel.h"

namespace vtp::test {

inline constexpr std::uint8_t kRockId = 2;
inline constexpr std::uint8_t kDirtId = 3;
inline constexpr std::uint8_t kSandId = 4;
inline constexpr std::uint8_t kGrassId = 5;
inline constexpr std::uint8_t kOreId = 6;

/// Rock at full occupancy: solid inside.
inline constexpr terrain::Voxel kRock{kRockId, 255};

}  // namespace vtp::test
