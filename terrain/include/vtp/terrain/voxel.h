#pragma once
/// \file
/// One voxel: a material id and an occupancy; every module shares these semantics (terrain/README.md).

#include <cstdint>

namespace vtp::terrain {

/// Material id 0: empty space. Always occupancy 0 (canonical form).
inline constexpr std::uint8_t kAirMaterial = 0;
/// Material id 1: water. Occupancy 1..255 is how full the voxel is.
inline constexpr std::uint8_t kWaterMaterial = 1;
/// Ids 2..255 are solid materials, defined by the world's MaterialTable.
inline constexpr std::uint8_t kFirstSolidMaterial = 2;
/// Occupancy at or above which a solid voxel is inside the surface.
inline constexpr std::uint8_t kSolidInsideOccupancy = 128;

/// A voxel: material (u8) + occupancy (u8), two bytes, trivially copyable.
/// Canonical form: material is air exactly when occupancy is 0. The world only ever stores canonical voxels.
struct Voxel {
  std::uint8_t material = kAirMaterial;  ///< 0 air, 1 water, 2..255 solid (see MaterialTable).
  std::uint8_t occupancy = 0;            ///< How much of the voxel is filled, 0..255.
  friend constexpr bool operator==(const Voxel&, const Voxel&) = default;
};
static_assert(sizeof(Voxel) == 2);

/// The air voxel.
inline constexpr Voxel kAir{};

constexpr bool isSolidMaterial(std::uint8_t material) { return material >= kFirstSolidMaterial; }

/// The one "inside" predicate: a solid material with occupancy >= 128. The surface lies between a solid-inside voxel
/// and one that is not; water and air are outside.
constexpr bool isSolidInside(Voxel v) { return isSolidMaterial(v.material) && v.occupancy >= kSolidInsideOccupancy; }

/// Water with any occupancy.
constexpr bool isWater(Voxel v) { return v.material == kWaterMaterial && v.occupancy > 0; }

/// Air exactly when occupancy is 0.
constexpr bool isCanonical(Voxel v) { return (v.material == kAirMaterial) == (v.occupancy == 0); }

/// The canonical voxel for a material and occupancy: occupancy 0 gives air.
constexpr Voxel canonicalVoxel(std::uint8_t material, std::uint8_t occupancy) {
  return (occupancy == 0 || material == kAirMaterial) ? kAir : Voxel{material, occupancy};
}

}  // namespace vtp::terrain
