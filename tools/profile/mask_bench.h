#pragma once
// The masks section of vtp-profile: chunk mask builds, the world's MaskIndex (build time, size, queries,
// edits with and without it) and the broadphase's precision against the mesher's triangles. Absolute figures (the
// masks have no Bullet counterpart), timed by the rules of timing.h.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>

#include "vtp/terrain/status.h"

namespace vtp::tools {

/// Measures the masks on the world file at `path`; `seed` draws the bodies and the edits. The JSON object goes under
/// "masks" in the report. An error only when the world cannot be loaded or read, or the mesher or the index fails.
Result<nlohmann::json> benchMasks(const std::filesystem::path& path, std::uint64_t seed);

}  // namespace vtp::tools
