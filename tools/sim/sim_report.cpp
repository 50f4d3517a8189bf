// vtp-sim's report (sim_report.h).
#include "sim_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "alloc_hook.h"
#include "vtp/physics/terrain_physics.h"
#include "vtp/terrain/hash.h"

namespace vtp::tools::sim {
namespace {

// A body a check flagged: its index in id order, shape and centre, for the report's details.
struct FlaggedBody {
  std::size_t id;
  std::string shape;
  btVector3 centre;
};

struct BodyChecks {
  int below = 0, out_of_world = 0, nan = 0, asleep = 0;
  std::vector<FlaggedBody> flagged_below;  // the first kMaxFlagged
};
constexpr std::size_t kMaxFlagged = 16;

BodyChecks checkBodies(SimWorld& sim, const Scene& scene) {
  BodyChecks checks;
  auto physics = physics::TerrainPhysics::create(sim.world());
  const double s = scene.voxel_size;
  const terrain::VoxelBox& b = scene.bounds;
  std::vector<physics::WorldRayHit> hits;
  for (std::size_t id = 0; id < sim.bodies().size(); ++id) {
    const btRigidBody* body = sim.bodies()[id];
    if (!body->isActive()) ++checks.asleep;
    const btVector3 p = body->getCenterOfMassPosition();
    const btVector3 v = body->getLinearVelocity(), w = body->getAngularVelocity();
    bool finite = true;
    for (int a = 0; a < 3; ++a) finite = finite && std::isfinite(p[a]) && std::isfinite(v[a]) && std::isfinite(w[a]);
    if (!finite) {
      ++checks.nan;
      continue;
    }
    // Above the stored chunks is open air (a flat world stores nothing above its ground): only the sides and the
    // bottom of the box bound the world.
    if (p.x() < b.min.x * s || p.x() >= b.max.x * s || p.y() < b.min.y * s || p.z() < b.min.z * s ||
        p.z() >= b.max.z * s) {
      ++checks.out_of_world;
      continue;
    }
    if (p.y() >= (b.max.y + 1) * s) continue;  // nothing above it to be under
    physics::Ray up;
    up.origin = {double(p.x()), double(p.y()), double(p.z())};
    up.direction = {0, (b.max.y + 2) * s - double(p.y()), 0};
    if (!physics || !physics.value()->raycastAll(up, hits)) continue;
    int crossings = 0;
    for (std::size_t k = 0; k < hits.size(); ++k) {
      const bool repeat = k > 0 && hits[k].hit.t - hits[k - 1].hit.t <= 1e-9 &&
                          hits[k].hit.front_face == hits[k - 1].hit.front_face;
      if (!repeat) ++crossings;
    }
    if (crossings % 2 == 1) {
      ++checks.below;
      if (checks.flagged_below.size() < kMaxFlagged) {
        checks.flagged_below.push_back({id, body->getCollisionShape()->getName(), p});
      }
    }
  }
  return checks;
}

}  // namespace

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = std::size_t(std::ceil(p / 100.0 * double(values.size())));
  return values[std::min(values.size() - 1, rank == 0 ? 0 : rank - 1)];
}

nlohmann::json modeReport(SimWorld& sim, const Scene& scene) {
  const std::vector<TickSample>& samples = sim.samples();
  auto column = [&](double TickSample::*field) {
    std::vector<double> v;
    v.reserve(samples.size());
    for (const TickSample& t : samples) v.push_back(t.*field);
    return v;
  };
  double step_total_ms = 0;
  for (const TickSample& t : samples) step_total_ms += t.step;
  const BackendCounters counters = sim.backend().counters();
  const BodyChecks checks = checkBodies(sim, scene);
  const double steps = double(std::max<std::size_t>(1, samples.size()));
  nlohmann::json j;
  j["bodies"] = sim.bodies().size();
  j["steps"] = samples.size();
  j["threads"] = sim.backend().threads();
  j["bodies_below_terrain"] = checks.below;
  j["bodies_out_of_world"] = checks.out_of_world;
  j["nan_bodies"] = checks.nan;
  j["hash"] = terrain::hashToHex(bodiesHash(sim.bodies()));
  j["steps_per_second"] = step_total_ms > 0 ? double(samples.size()) / (step_total_ms / 1000.0) : 0.0;
  j["step_ms_p50"] = percentile(column(&TickSample::step), 50);
  j["step_ms_p99"] = percentile(column(&TickSample::step), 99);
  j["terrain_collision_ms_per_step_p50"] = percentile(column(&TickSample::terrain), 50);
  j["background_cpu_ms_per_step_p50"] = percentile(column(&TickSample::background_cpu), 50);
  {
    // Terrain collision wall time plus background CPU, per awake body, median over the steps with bodies awake.
    std::vector<double> per_body;
    for (const TickSample& t : samples)
      if (t.awake > 0) per_body.push_back((t.terrain + t.background_cpu) * 1000.0 / t.awake);
    j["terrain_collision_us_per_awake_body"] = per_body.empty() ? 0.0 : percentile(per_body, 50);
  }
  j["broadphase_ms_per_step_p50"] = percentile(column(&TickSample::broadphase), 50);
  j["solver_ms_per_step_p50"] = percentile(column(&TickSample::solver), 50);
  j["integrate_ms_per_step_p50"] = percentile(column(&TickSample::integrate), 50);
  j["water_ms_per_step_p50"] = percentile(column(&TickSample::water), 50);
  j["bodies_in_water"] = sim.bodiesInWater();
  j["rays_ms_per_step_p50"] = percentile(column(&TickSample::rays), 50);
  j["collision_memory_bytes"] = taggedPeakBytes(sim.tag());
  j["time_to_first_step_ms"] = sim.timeToFirstStepMs();
  j["contacts"] = sim.contacts();
  j["gjk_calls_per_step"] = double(counters.gjk_calls) / steps;
  j["colliders_built"] = counters.colliders_built;
  j["cache_bytes"] = counters.cache_bytes;
  j["bodies_outside_range"] = counters.bodies_outside_range;
  j["colliders_built_in_step"] = counters.colliders_built_in_step;
  j["colliders_prefetched"] = counters.colliders_prefetched;
  j["bodies_asleep"] = checks.asleep;
  j["edits_applied"] = sim.editsApplied();
  j["narrowphase_calls"] = sim.terrainPairCalls();
  j["empty_narrowphase_calls"] = sim.emptyTerrainPairCalls();
  j["ray_hits"] = sim.rayHits();
  for (const auto& [name, value] : counters.details) j["details"][name] = value;
  // Which bodies ended below the terrain, so a failed check can be replayed and looked at.
  j["details"]["below_terrain"] = nlohmann::json::array();
  for (const FlaggedBody& f : checks.flagged_below) {
    j["details"]["below_terrain"].push_back(
        {{"id", f.id}, {"shape", f.shape}, {"centre", {f.centre.x(), f.centre.y(), f.centre.z()}}});
  }
  return j;
}

nlohmann::json ratios(const nlohmann::json& vtp, const nlohmann::json& bullet_bvh) {
  auto ratio = [&](const char* key) {
    const double ours = vtp[key].get<double>(), theirs = bullet_bvh[key].get<double>();
    return ours > 0 ? theirs / ours : 0.0;
  };
  nlohmann::json r;
  r["terrain_collision"] = ratio("terrain_collision_ms_per_step_p50");
  r["step"] = ratio("step_ms_p50");
  r["memory"] = ratio("collision_memory_bytes");
  r["first_step"] = ratio("time_to_first_step_ms");
  return r;
}

std::string summaryLine(const char* key, const nlohmann::json& s) {
  char line[512];
  std::snprintf(line, sizeof line,
                "%s: %d steps, %.1f steps/s, step p50 %.3f ms p99 %.3f ms, terrain p50 %.3f ms, memory %.1f MiB, "
                "first step %.1f ms, below %d, out %d, nan %d, asleep %d, edits %d, hash %s",
                key, s["steps"].get<int>(), s["steps_per_second"].get<double>(), s["step_ms_p50"].get<double>(),
                s["step_ms_p99"].get<double>(), s["terrain_collision_ms_per_step_p50"].get<double>(),
                s["collision_memory_bytes"].get<double>() / 1048576.0, s["time_to_first_step_ms"].get<double>(),
                s["bodies_below_terrain"].get<int>(), s["bodies_out_of_world"].get<int>(), s["nan_bodies"].get<int>(),
                s["bodies_asleep"].get<int>(), s["edits_applied"].get<int>(), s["hash"].get<std::string>().c_str());
  return line;
}

}  // namespace vtp::tools::sim
