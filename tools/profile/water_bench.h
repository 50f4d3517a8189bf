#pragma once
// The water section of vtp-profile: what submerged() costs a body floating in a world's water, per shape kind.
// Absolute figures (Bullet has no buoyancy query to compare with), timed by the rules of timing.h.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>

#include "vtp/terrain/status.h"

namespace vtp::tools {

/// Measures submerged() on the world file at `path`; `seed` draws the bodies. The JSON object goes under "water" in
/// the report (figures null for a world without water). An error only when the world cannot be loaded or read, or
/// its terrain physics cannot be made.
Result<nlohmann::json> benchWater(const std::filesystem::path& path, std::uint64_t seed);

}  // namespace vtp::tools
