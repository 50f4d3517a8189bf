// vtp-sim: the main job. A headless game-server loop at 60 Hz on a saved world: rigid bodies resting, rolling and
// sliding on the terrain, a crater dug under a resting body every 2 s, a bridge built across the river at 20 s and R
// raycasts per step, with the terrain's collision done by vtp (the BulletTerrain adapter) and/or by Bullet's own
// per-chunk BVH meshes. Both modes step alternately in one process from the same scene and get the same edits.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "alloc_hook.h"
#include "bullet_bvh_mode.h"
#include "cli.h"
#include "report.h"
#include "scene.h"
#include "sim_report.h"
#include "sim_world.h"
#include "soak_memory.h"
#include "tool.h"
#include "vtp_mode.h"

const char* const kToolName = "vtp-sim";

namespace {

using namespace vtp::tools;
using namespace vtp::tools::sim;

// The default world: relative to the working directory (the project's root), else in the source tree it was built
// from.
std::string defaultWorld() {
  const std::string relative = "data/worlds/default.vtw";
  if (std::filesystem::exists(relative)) return relative;
  return std::string(VTP_SIM_SOURCE_DIR) + "/" + relative;
}

void printProgress(int second, const std::vector<std::unique_ptr<SimWorld>>& modes) {
  std::string line = "vtp-sim: t=" + std::to_string(second) + "s";
  for (const auto& m : modes) {
    const auto& samples = m->samples();
    std::vector<double> step, terrain;
    for (std::size_t k = samples.size() >= 60 ? samples.size() - 60 : 0; k < samples.size(); ++k) {
      step.push_back(samples[k].step);
      terrain.push_back(samples[k].terrain);
    }
    int asleep = 0;
    for (const btRigidBody* b : m->bodies()) asleep += b->isActive() ? 0 : 1;
    char part[200];
    std::snprintf(part, sizeof part, "  %s step p50 %.3f ms, terrain p50 %.3f ms, asleep %d, edits %llu", m->key(),
                  percentile(step, 50), percentile(terrain, 50), asleep,
                  static_cast<unsigned long long>(m->editsApplied()));
    line += part;
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace

int toolMain(int argc, char** argv) {
  CLI::App app{"The main job: rigid bodies on a saved world's terrain in a 60 Hz server loop, with terrain edits and "
               "raycasts, timing vtp's terrain collision against Bullet's per-chunk BVH meshes.",
               kToolName};
  std::string world_path = defaultWorld(), json_path = "-", collision = "both";
  int bodies = 1000, rays = 100;
  double seconds = 60;
  std::string seed_text = "1";
  std::size_t cache_bytes = std::size_t(64) << 20;
  bool no_sleep = false;
  double edits_per_second = 0;
  const unsigned cores = std::thread::hardware_concurrency();
  int threads = int(std::clamp(cores == 0 ? 1u : cores, 1u, 256u));
  app.add_option("--world", world_path, "World file (.vtw); default data/worlds/default.vtw");
  app.add_option("--bodies", bodies, "Rigid bodies (spheres, boxes, capsules, convex hulls)")->check(CLI::Range(1, 100000));
  app.add_option("--seconds", seconds, "Simulated seconds at 60 steps per second")->check(CLI::Range(1.0 / 60.0, 86400.0));
  app.add_option("--rays-per-step", rays, "Raycasts per step from random bodies")->check(CLI::Range(0, 1000000));
  app.add_option("--seed", seed_text, "Seed for the bodies, craters and rays, 0 .. 2^64-1 (default 1)");
  app.add_option("--threads", threads,
                 "Threads for vtp's terrain contacts and the water forces, 1..256 (default: the machine's cores; "
                 "bullet-bvh's collision stays on one)")
      ->check(CLI::Range(1, 256));
  app.add_option("--edits-per-second", edits_per_second,
                 "Soak: craters and fills per second at random spots near bodies (fills clear of every body), 0..1000")
      ->check(CLI::Range(0.0, 1000.0));
  app.add_flag("--no-sleep", no_sleep, "Keep every body awake (no deactivation)");
  app.add_option("--cache-bytes", cache_bytes, "vtp collider cache budget in bytes")->check(CLI::Range(std::size_t(1), std::size_t(1) << 40));
  app.add_option("--collision", collision, "Terrain collision: vtp, bullet-bvh or both (stepped alternately)")
      ->check(CLI::IsMember({"vtp", "bullet-bvh", "both"}));
  app.add_option("--json", json_path, "Report path ('-' = stdout, the default)");
  if (auto code = parseArgs(app, argc, argv)) return *code;
  if (auto code = refuseSharedPaths(kToolName, {{"--world", world_path}}, {{"--json", json_path}})) return *code;
  const vtp::Result<std::uint64_t> parsed_seed = parseSeed(seed_text);
  if (!parsed_seed) return fail(kToolName, parsed_seed.error(), kExitUsage);
  const std::uint64_t seed = *parsed_seed;
  // CLI11's Range lets NaN by.
  if (!std::isfinite(seconds)) return fail(kToolName, "--seconds must be a finite number", kExitUsage);
  if (!std::isfinite(edits_per_second))
    return fail(kToolName, "--edits-per-second must be a finite number", kExitUsage);
  if (auto code = refuseUnwritable(kToolName, {{"--json", json_path}})) return *code;

  installBulletAllocationHook();
  auto scene = buildScene(world_path, bodies, seed);
  if (!scene) return fail(kToolName, scene.error());

  auto pool = vtp::physics::ThreadPool::create(unsigned(threads));
  if (!pool) return fail(kToolName, pool.error());
  SimOptions options;
  options.tasks = pool.value().get();
  options.cache_bytes = cache_bytes;
  options.no_sleep = no_sleep;
  options.rays_per_step = rays;
  options.seed = seed;
  std::vector<std::unique_ptr<SimWorld>> modes;
  if (collision != "bullet-bvh") {
    options.tag = 1;
    modes.push_back(std::make_unique<SimWorld>(makeVtpBackend(), scene.value(), options));
  }
  if (collision != "vtp") {
    options.tag = 2;
    modes.push_back(std::make_unique<SimWorld>(makeBulletBvhBackend(), scene.value(), options));
  }
  for (auto& m : modes)
    if (vtp::Status s = m->open(world_path); !s) return fail(kToolName, s.error());

  // The schedule follows the first mode's bodies (vtp's when it runs); every mode gets the same edits in the same tick.
  const int ticks = std::max(1, int(std::lround(seconds * 60)));
  std::uint64_t crater_state = seed ^ 0x43524154455253ull;
  bool bridge_done = scene->water.bridges.empty();
  std::vector<vtp::terrain::EditCommand> edits;
  nlohmann::json bridge_report;  // null until the bridge is built
  std::uint64_t soak_state = seed ^ 0x534f414b45444954ull;
  double soak_credit = 0;  // soak edits due, in edits
  std::uint64_t soak_edits = 0;
  SoakMemory memory;
  for (int tick = 0; tick < ticks; ++tick) {
    edits.clear();
    soak_credit += edits_per_second / 60.0;
    if (soak_credit >= 1) {
      const std::vector<BodyState> states = modes.front()->bodyStates();
      for (; soak_credit >= 1; soak_credit -= 1) {
        if (auto e = pickSoakEdit(scene.value(), states, soak_edits % 2 == 1, soak_state)) edits.push_back(*e);
        ++soak_edits;
      }
    }
    const bool crater_due = tick > 0 && tick % kCraterEveryTicks == 0, bridge_due = !bridge_done && tick >= kBridgeTick;
    if (crater_due || bridge_due) {
      const std::vector<BodyState> states = modes.front()->bodyStates();
      if (crater_due)
        if (auto crater = pickCrater(scene.value(), states, crater_state)) edits.push_back(*crater);
      if (bridge_due)
        if (auto bridge = pickBridge(scene.value(), states)) {
          edits.push_back(*bridge);
          bridge_done = true;
          const auto& box = std::get<vtp::terrain::BoxShape>(std::get<vtp::terrain::ShapeEdit>(*bridge).shape);
          bridge_report = {{"tick", tick}, {"min", {box.min.x, box.min.y, box.min.z}}, {"max", {box.max.x, box.max.y, box.max.z}}};
        }
    }
    for (auto& m : modes) m->tick(edits);
    if ((tick + 1) % 60 == 0) printProgress((tick + 1) / 60, modes);
    if (tick + 1 == kSoakMarkTicks) memory.mark(modes);
  }
  memory.end(modes);

  nlohmann::json report;
  report["machine"] = machineInfo();
  report["build"] = buildInfo();
  report["world"] = jsonText(world_path);
  report["bodies"] = bodies;
  report["seconds"] = double(ticks) / 60.0;
  report["rays_per_step"] = rays;
  report["seed"] = seed;
  report["no_sleep"] = no_sleep;
  report["threads"] = threads;
  report["edits_per_second"] = edits_per_second;
  report["process"] = memory.processReport();
  report["cache_bytes_budget"] = cache_bytes;
  report["collision"] = collision;
  report["scene"] = {{"bodies_over_lake", 0}, {"has_lake", scene->water.has_lake},
                     {"bridge_candidates", scene->water.bridges.size()}, {"bridge", bridge_report}};
  int over_lake = 0;
  for (const BodySpec& b : scene->bodies) over_lake += b.over_lake ? 1 : 0;
  report["scene"]["bodies_over_lake"] = over_lake;
  for (auto& m : modes) {
    report[m->key()] = modeReport(*m, scene.value());
    memory.addModeReport(*m, report[m->key()]);
    std::fprintf(stderr, "%s\n", summaryLine(m->key(), report[m->key()]).c_str());
  }
  if (report.contains("vtp") && report.contains("bullet_bvh")) {
    report["ratios"] = ratios(report["vtp"], report["bullet_bvh"]);
    const auto& r = report["ratios"];
    std::fprintf(stderr, "ratios (bullet_bvh / vtp): terrain_collision %.2f, step %.2f, memory %.2f, first_step %.2f\n",
                 r["terrain_collision"].get<double>(), r["step"].get<double>(), r["memory"].get<double>(),
                 r["first_step"].get<double>());
  }
  if (auto s = writeJson(report, json_path); !s) return fail(kToolName, s.error());
  return kExitOk;
}
