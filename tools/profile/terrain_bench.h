#pragma once
// The terrain section of vtp-profile: readBox of the 10^3 (mesher/masks) and 12^3 (edge flags) boxes, world load
// time and memory per stored chunk. These have no Bullet counterpart, so they are absolute figures.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>

#include "vtp/terrain/status.h"

namespace vtp::tools {

/// Measures the world file at `path`; the JSON object goes under "terrain" in the report.
Result<nlohmann::json> benchTerrain(const std::filesystem::path& path, std::uint64_t seed);

}  // namespace vtp::tools
