#pragma once
/// \file
/// Positions and displacements in world space, the space every physics query takes and answers in.

#include <array>
#include <cstddef>

#include "vtp/terrain/assert.h"

namespace vtp::physics {

/// A point or displacement in world space. [Unit: world] (world units = voxels x the world's voxel_size; voxel
/// space, where edits and voxel coordinates live, is terrain::Vec3d). Indexable (0 = x, 1 = y, 2 = z) so per-axis
/// loops read as on an array.
struct WorldVec3 {
  double x = 0, y = 0, z = 0;

  constexpr WorldVec3() noexcept = default;
  constexpr WorldVec3(double x_, double y_, double z_) noexcept : x(x_), y(y_), z(z_) {}
  /// From maths written over arrays; explicit, so a unitless array never becomes a world position unnoticed.
  constexpr explicit WorldVec3(const std::array<double, 3>& v) noexcept : x(v[0]), y(v[1]), z(v[2]) {}

  constexpr double& operator[](std::size_t axis) noexcept {
    VTP_ASSERT(axis < 3, "a WorldVec3 has axes 0, 1 and 2");
    return axis == 0 ? x : axis == 1 ? y : z;
  }
  constexpr double operator[](std::size_t axis) const noexcept {
    VTP_ASSERT(axis < 3, "a WorldVec3 has axes 0, 1 and 2");
    return axis == 0 ? x : axis == 1 ? y : z;
  }
  /// The same three numbers as an array, for maths written over arrays.
  constexpr std::array<double, 3> array() const noexcept { return {x, y, z}; }
  friend constexpr bool operator==(const WorldVec3&, const WorldVec3&) = default;
};

}  // namespace vtp::physics
