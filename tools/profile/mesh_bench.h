#pragma once
// The mesher section of vtp-profile: SurfaceMesher::mesh per surface chunk of a world, its fast paths and an
// adversarial white-noise box. Absolute figures (the mesher has no Bullet counterpart), timed as timing.h says.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>

#include "vtp/terrain/status.h"

namespace vtp::tools {

/// Measures the mesher on the world file at `path`; `seed` draws the white-noise box. The JSON object goes under
/// "mesh" in the report. An error only when the world cannot be loaded or read, or the mesher fails.
Result<nlohmann::json> benchMesh(const std::filesystem::path& path, std::uint64_t seed);

}  // namespace vtp::tools
