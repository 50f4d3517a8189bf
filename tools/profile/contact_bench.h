#pragma once
// The contacts section of vtp-profile: what TerrainPhysics::contacts costs a huge body, a sphere of radius 32 voxels
// resting on a world's surface (a body larger than a few chunks). Absolute figures, timed by the rules of timing.h.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>

#include "vtp/terrain/status.h"

namespace vtp::tools {

/// Measures contacts() on the world file at `path`; `seed` draws the poses. The JSON object goes under "contacts" in
/// the report (figures null for a world without a surface). An error only when the world cannot be loaded or its
/// terrain physics cannot be made.
Result<nlohmann::json> benchContacts(const std::filesystem::path& path, std::uint64_t seed);

}  // namespace vtp::tools
