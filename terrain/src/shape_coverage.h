#pragma once
// Coverage of voxels by edit shapes (see vtp/terrain/edit.h): cov = clamp(0.5 + s, 0, 1), s = how far the voxel
// centre lies inside the shape. Computed without FMA contraction (the build sets -ffp-contract=off), so edits give the
// same voxels in every build.

#include <optional>

#include "vtp/terrain/coords.h"
#include "vtp/terrain/edit.h"

namespace vtp::terrain {

/// Signed depth of voxel v's centre inside the shape. [Unit: voxel]
double insideDepth(const Shape& shape, VoxelCoord v);

/// Bounding box of every voxel with cov > 0 (a superset is fine). nullopt when the box would leave storage
/// (|v| >= 2^24) — the caller has already checked the shape's numbers are finite.
std::optional<VoxelBox> touchedBox(const Shape& shape);

}  // namespace vtp::terrain
