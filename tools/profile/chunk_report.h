#pragma once
// The per-chunk outputs of vtp-profile: a CSV with one row per surface chunk, and a self-contained HTML report
// (inline SVG, no scripts, no network) a person opens in a browser: the summary table, histograms of collider bytes
// per triangle and build time, build time against triangle count next to Bullet, a top-down map of the world
// coloured by collider cost, and the published layout's reference row.

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "collider_bench.h"
#include "vtp/terrain/status.h"

namespace vtp::tools {

/// Writes `rows` as CSV (a header line, then one line per chunk). kIo on failure.
Status writeChunkCsv(const std::vector<ChunkRow>& rows, const std::string& path);

/// Writes the HTML report of `report` (the JSON report) and `rows`. kIo on failure.
Status writeHtmlReport(const nlohmann::json& report, const std::vector<ChunkRow>& rows, const std::string& path);

}  // namespace vtp::tools
