#pragma once
// vtp-sim's report: one mode's section (keys written by sim_report.cpp; the report shape in tools/README.md) checked after the last step,
// the ratios between two modes, and the one-line summaries printed on stderr.

#include <nlohmann/json.hpp>

#include <string>

#include "scene.h"
#include "sim_world.h"

namespace vtp::tools::sim {

/// Nearest-rank percentile (p in (0, 100]) of `values`; 0 when empty.
double percentile(std::vector<double> values, double p);

/// The mode's section after its last step. Checks bodies against the terrain with a fresh TerrainPhysics of the
/// mode's own world (outside the allocation hook's scopes): a body is below the terrain when the upward all-hits ray
/// from its centre to above the world crosses the surface an odd number of times (hits at the same t on the same side
/// of the surface, a ray through a shared edge, count once); it is out of the world when its centre lies outside the
/// box of the world's stored chunks on x or z or below it (above it is open air: a flat world stores no chunk above
/// its ground).
nlohmann::json modeReport(SimWorld& sim, const Scene& scene);

/// bullet_bvh ÷ vtp of the four compared figures.
nlohmann::json ratios(const nlohmann::json& vtp, const nlohmann::json& bullet_bvh);

/// "vtp: 600 steps, 812.3 steps/s, step p50 1.10 ms ..." (no newline).
std::string summaryLine(const char* key, const nlohmann::json& section);

}  // namespace vtp::tools::sim
