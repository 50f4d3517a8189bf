#pragma once
// The collider sections of vtp-profile (issue 5): collider build, bytes and queries per surface chunk, side by side
// with Bullet's btBvhTriangleMeshShape on the same triangles, every query of ours checked against a double-precision
// oracle. Fills the report's "collider", "ratios" and "mismatches" objects.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>

#include "vtp/terrain/status.h"

namespace vtp::tools {

/// Measures on the world file at `path`; `seed` draws the queries. Writes report["collider"], report["ratios"] and
/// report["mismatches"]. An error only when the world cannot be loaded or read.
Status benchColliders(const std::filesystem::path& path, std::uint64_t seed, nlohmann::json& report);

}  // namespace vtp::tools
