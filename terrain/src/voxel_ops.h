#pragma once
// The per-voxel edit rules (terrain/README.md): what fill, clear and paint do to one voxel given the coverage level c.

#include <algorithm>
#include <cstdint>

#include "vtp/terrain/edit.h"
#include "vtp/terrain/voxel.h"

namespace vtp::terrain {

/// Coverage level c = round(255 * cov) for cov in [0, 1].
inline std::uint8_t coverageLevel(double cov) {
  return std::uint8_t(std::clamp(cov, 0.0, 1.0) * 255.0 + 0.5);
}

/// Fill with material m (water or solid) at level c > 0.
constexpr Voxel fillVoxel(Voxel old, std::uint8_t m, std::uint8_t c) {
  if (old.material == kAirMaterial ||
      (old.material == kWaterMaterial && isSolidMaterial(m) && c >= kSolidInsideOccupancy)) {
    return canonicalVoxel(m, c);
  }
  if (old.material == m) return Voxel{m, std::max(old.occupancy, c)};
  if (isSolidMaterial(old.material) && isSolidMaterial(m)) return Voxel{old.material, std::max(old.occupancy, c)};
  return old;  // water poured over a solid, or a thin solid over water
}

/// Clear at level c: occupancy = min(old, 255 - c); zero becomes air.
constexpr Voxel clearVoxel(Voxel old, std::uint8_t c) {
  return canonicalVoxel(old.material, std::min<std::uint8_t>(old.occupancy, std::uint8_t(255 - c)));
}

/// Paint solid voxels with solid material m (any c > 0); occupancy kept.
constexpr Voxel paintVoxel(Voxel old, std::uint8_t m) {
  return isSolidMaterial(old.material) ? Voxel{m, old.occupancy} : old;
}

constexpr Voxel applyOp(Voxel old, EditOp op, std::uint8_t m, std::uint8_t c) {
  switch (op) {
    case EditOp::kFill: return fillVoxel(old, m, c);
    case EditOp::kClear: return clearVoxel(old, c);
    case EditOp::kPaint: return paintVoxel(old, m);
  }
  return old;
}

}  // namespace vtp::terrain
