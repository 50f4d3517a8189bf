// vtp-profile: the offline chunk profiler. It measures the terrain layer, the mesher, the broadphase masks, the
// colliders (build, bytes, queries and the cache) and the water query, each next to Bullet where Bullet has a
// counterpart; optionally a CSV row per surface chunk and a self-contained HTML report.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "chunk_report.h"
#include "cli.h"
#include "collider_bench.h"
#include "contact_bench.h"
#include "mask_bench.h"
#include "mesh_bench.h"
#include "report.h"
#include "terrain_bench.h"
#include "tool.h"
#include "water_bench.h"

const char* const kToolName = "vtp-profile";

int toolMain(int argc, char** argv) {
  using namespace vtp::tools;
  CLI::App app{"Offline profiler: measures what a saved world's collision data costs.", kToolName};
  std::string world_path, json_path = "-", csv_path, html_path, box_text;
  std::vector<std::string> sections;
  std::string seed_text = "1";
  app.add_option("WORLD", world_path, "World file (.vtw)")->required();
  app.add_option("--json", json_path, "Report path ('-' = stdout)");
  app.add_option("--csv", csv_path, "Also write one row per surface chunk (costs, ours and Bullet's) to this CSV file");
  app.add_option("--html", html_path, "Also write a self-contained HTML report (charts, map, summary) to this file");
  app.add_option("--box", box_text,
                 "Collider sections: only the chunks whose voxels intersect this box, x0,y0,z0,x1,y1,z1 in voxels, max "
                 "exclusive");
  app.add_option("--seed", seed_text,
                 "Seed for the order boxes are measured in, the white-noise mesher box, the masks' bodies and edits "
                 "and the water's bodies, 0 .. 2^64-1 (default 1)");
  app.add_option("--sections", sections,
                 "Measure only these sections, comma-separated (default: all): terrain, mesh, masks, colliders (with "
                 "ratios, mismatches and cache), water, contacts")
      ->delimiter(',')
      ->check(CLI::IsMember({"terrain", "mesh", "masks", "colliders", "water", "contacts"}));
  if (auto code = parseArgs(app, argc, argv)) return *code;
  if (auto code = refuseSharedPaths(kToolName, {{"WORLD", world_path}},
                                    {{"--json", json_path}, {"--csv", csv_path}, {"--html", html_path}})) {
    return *code;
  }
  const vtp::Result<std::uint64_t> parsed_seed = parseSeed(seed_text);
  if (!parsed_seed) return fail(kToolName, parsed_seed.error(), kExitUsage);
  const std::uint64_t seed = *parsed_seed;
  const auto wanted = [&](const char* section) {
    return sections.empty() || std::find(sections.begin(), sections.end(), section) != sections.end();
  };
  if ((!csv_path.empty() || !html_path.empty()) && !wanted("colliders")) {
    return fail(kToolName, "--csv and --html need the colliders section (--sections colliders)", kExitUsage);
  }
  std::optional<vtp::terrain::VoxelBox> box;
  if (!box_text.empty()) {
    auto parsed = parseBox(box_text);
    if (!parsed) return fail(kToolName, parsed.error(), kExitUsage);
    box = *parsed;
  }
  if (auto code = refuseUnwritable(kToolName, {{"--json", json_path}, {"--csv", csv_path}, {"--html", html_path}})) {
    return *code;
  }

  nlohmann::json report;
  report["machine"] = machineInfo();
  report["build"] = buildInfo();
  if (wanted("terrain")) {
    auto terrain = benchTerrain(world_path, seed);
    if (!terrain) return fail(kToolName, terrain.error());
    report["terrain"] = terrain.value();
  }
  if (wanted("mesh")) {
    auto mesh = benchMesh(world_path, seed);
    if (!mesh) return fail(kToolName, mesh.error());
    report["mesh"] = mesh.value();
  }
  if (wanted("masks")) {
    auto masks = benchMasks(world_path, seed);
    if (!masks) return fail(kToolName, masks.error());
    report["masks"] = masks.value();
  }
  if (wanted("water")) {
    auto water = benchWater(world_path, seed);
    if (!water) return fail(kToolName, water.error());
    report["water"] = water.value();
  }
  if (wanted("contacts")) {
    auto contacts = benchContacts(world_path, seed);
    if (!contacts) return fail(kToolName, contacts.error());
    report["contacts"] = contacts.value();
  }
  // A progress bar on stderr when it is a terminal.
  Progress progress;
  if (isatty(STDERR_FILENO)) {
    progress = [](std::size_t done, std::size_t total) {
      const int width = 40, filled = total ? int(double(done) / double(total) * width) : width;
      std::fprintf(stderr, "\rcolliders [%-*s] %3d%%", width, std::string(std::size_t(filled), '#').c_str(),
                   total ? int(100.0 * double(done) / double(total)) : 100);
      if (done >= total) std::fprintf(stderr, "\n");
    };
  }
  std::vector<ChunkRow> rows;
  if (wanted("colliders")) {
    if (vtp::Status s = benchColliders(world_path, seed, box, report, rows, progress); !s) {
      return fail(kToolName, s.error());
    }
    if (progress) std::fprintf(stderr, "\n");
  }
  if (!csv_path.empty()) {
    if (vtp::Status s = writeChunkCsv(rows, csv_path); !s) return fail(kToolName, s.error());
  }
  if (!html_path.empty()) {
    if (vtp::Status s = writeHtmlReport(report, rows, html_path); !s) return fail(kToolName, s.error());
  }
  if (auto s = writeJson(report, json_path); !s) return fail(kToolName, s.error());
  return kExitOk;
}
