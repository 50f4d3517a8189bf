#pragma once
// The scene vtp-sim runs, identical in every collision mode: bodies placed from the seed above the surface found by
// downward raycasts, the lake and river found from the world's water voxels, and the two scheduled edits (a crater
// under a resting body every 2 s, a bridge across the river at t = 20 s).

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vtp/terrain/coords.h"
#include "vtp/terrain/edit.h"
#include "vtp/terrain/status.h"

namespace vtp::tools::sim {

enum class BodyKind : std::uint8_t { kSphere, kBox, kCapsule, kHull };

/// One rigid body's start. [Unit: world units] except where noted.
struct BodySpec {
  BodyKind kind = BodyKind::kSphere;
  /// Sphere: radius; box: half extents; capsule: radius, half the cylinder's height (Y axis).
  std::array<double, 3> size{};
  std::vector<std::array<double, 3>> hull_points;  ///< Convex hull points around the body's origin.
  std::array<double, 3> position{};
  std::array<double, 4> orientation{0, 0, 0, 1};  ///< Quaternion x, y, z, w.
  double mass = 1;                                 ///< [Unit: kg] (density 300 to 2000 kg per voxel-unit cube)
  bool over_lake = false;
};

/// Where the world's water lies, from its water voxels (tools/worldgen lays out one round lake and a river from it
/// to the rim; any world works: without water both are absent).
struct WaterLayout {
  bool has_water = false;            ///< Any water voxel.
  bool has_lake = false;
  std::array<int, 2> lake_centre{};  ///< x, z column. [Unit: voxel]
  int lake_radius = 0;               ///< Columns within this distance of the centre are lake. [Unit: voxel]
  int water_top = 0;                 ///< One above the highest water voxel. [Unit: voxel]
  /// Bridge boxes across the river (1 voxel thick, 3 wide, 24 long), best first; empty when there is no river.
  std::vector<terrain::VoxelBox> bridges;
};

struct Scene {
  terrain::VoxelBox bounds;  ///< Box of the world's stored chunks. [Unit: voxel]
  double voxel_size = 1;
  WaterLayout water;
  std::vector<BodySpec> bodies;
  std::uint8_t bridge_material = 2;  ///< rock
};

/// Loads the world at `path` and builds the scene of `body_count` bodies from `seed`. Errors: the world cannot be
/// loaded, or it has no surface to stand on.
Result<Scene> buildScene(const std::string& path, int body_count, std::uint64_t seed);

/// What the scheduler needs to know of one body after a step. [Unit: world units]
struct BodyState {
  std::array<double, 3> position{};
  std::array<double, 3> aabb_min{}, aabb_max{};
  bool resting = false;  ///< Asleep, or moving slower than 0.1 voxel/s and turning slower than 0.5 rad/s.
  bool finite = true;
};

/// Crater radius and its clearance from the world's bounds. [Unit: voxel]
inline constexpr double kCraterRadius = 4;
inline constexpr double kCraterMargin = 8;
/// Crater period and bridge time. [Unit: tick at 60 Hz]
inline constexpr int kCraterEveryTicks = 120;
inline constexpr int kBridgeTick = 1200;

/// A radius-4 sphere of air under a random resting body (uniform over the eligible ones), whose sphere stays 8 voxels
/// inside the bounds; nullopt when no body qualifies. Draws from `random_state` (splitmix64).
std::optional<terrain::EditCommand> pickCrater(const Scene& scene, std::span<const BodyState> bodies,
                                               std::uint64_t& random_state);
/// The first bridge candidate clear of every body by 0.5 voxel, as a fill edit; nullopt when none is clear (or the
/// world has no river).
std::optional<terrain::EditCommand> pickBridge(const Scene& scene, std::span<const BodyState> bodies);

/// Soak edits (vtp-sim --edits-per-second): a crater (air sphere of radius 1.5 to 3) or, when `fill`, a rock sphere of
/// radius 1 to 2.5, centred within 8 voxels across and 3 up or down of a random finite body's bottom, kept 8 voxels
/// inside the bounds; a fill whose box grown by one voxel meets any finite body's box is tried elsewhere (up to 8
/// tries), so no fill buries or touches a body. nullopt when no body or no clear spot was found. Draws from
/// `random_state`.
std::optional<terrain::EditCommand> pickSoakEdit(const Scene& scene, std::span<const BodyState> bodies, bool fill,
                                                 std::uint64_t& random_state);

/// splitmix64 step and a double in [0, 1) from it.
std::uint64_t nextRandom(std::uint64_t& state);
double uniformRandom(std::uint64_t& state);
/// A unit vector from N uniforms in [-1, 1) (not uniform on the sphere; deterministic, enough for directions and
/// orientations).
template <std::size_t N>
std::array<double, N> randomUnit(std::uint64_t& state) {
  std::array<double, N> v{};
  double n = 0;
  for (double& c : v) {
    c = uniformRandom(state) * 2 - 1;
    n += c * c;
  }
  n = std::sqrt(n > 1e-24 ? n : 1e-24);
  for (double& c : v) c /= n;
  return v;
}

}  // namespace vtp::tools::sim
