#pragma once
// The collider sections of vtp-profile: collider build, bytes and queries per surface chunk, side by side
// with Bullet's btBvhTriangleMeshShape on the same triangles, every query of ours checked against a double-precision
// oracle. Fills the report's "collider", "ratios" and "mismatches" objects.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "vtp/terrain/coords.h"
#include "vtp/terrain/status.h"

namespace vtp::tools {

/// One surface chunk's costs, for the CSV and HTML reports. Times are medians of 3 sweeps. [Unit: ns, byte]
struct ChunkRow {
  terrain::ChunkCoord chunk;
  int triangles = 0;
  double read_box_ns = 0, mesh_ns = 0, mask_ns = 0, build_ns = 0;
  int kd_depth = 0, kd_nodes = 0, leaves = 0;
  std::size_t bytes = 0;
  double bullet_quantized_ns = 0, bullet_plain_ns = 0;
  std::size_t bullet_quantized_bytes = 0, bullet_plain_bytes = 0;
};

/// Reports progress (done, total) of the long loops; may be empty.
using Progress = std::function<void(std::size_t, std::size_t)>;

/// Measures on the world file at `path` (only the chunks whose voxels intersect `box`, when given); `seed` draws the
/// queries. Writes report["collider"], report["ratios"], report["mismatches"] and report["cache"], and one row per
/// surface chunk into `rows`. An error only when the world cannot be loaded or read.
Status benchColliders(const std::filesystem::path& path, std::uint64_t seed, const std::optional<terrain::VoxelBox>& box,
                      nlohmann::json& report, std::vector<ChunkRow>& rows, const Progress& progress = {});

}  // namespace vtp::tools
