// vtp-profile: the offline chunk profiler. It measures the terrain layer, the mesher and the broadphase masks; the
// kD-tree and contact sections arrive with their issues, each next to Bullet where Bullet has a counterpart.
#include <cstdio>
#include <string>

#include "cli.h"
#include "collider_bench.h"
#include "mask_bench.h"
#include "mesh_bench.h"
#include "report.h"
#include "terrain_bench.h"
#include "tool.h"

const char* const kToolName = "vtp-profile";

int toolMain(int argc, char** argv) {
  using namespace vtp::tools;
  CLI::App app{"Offline profiler: measures what a saved world's collision data costs.", kToolName};
  std::string world_path, json_path = "-";
  std::uint64_t seed = 1;
  app.add_option("WORLD", world_path, "World file (.vtw)")->required();
  app.add_option("--json", json_path, "Report path ('-' = stdout)");
  app.add_option("--seed", seed,
                 "Seed for the order boxes are measured in, the white-noise mesher box and the masks' bodies and edits")
      ->check(CLI::NonNegativeNumber);
  if (auto code = parseArgs(app, argc, argv)) return *code;

  auto terrain = benchTerrain(world_path, seed);
  if (!terrain) return fail(kToolName, terrain.error());
  auto mesh = benchMesh(world_path, seed);
  if (!mesh) return fail(kToolName, mesh.error());
  auto masks = benchMasks(world_path, seed);
  if (!masks) return fail(kToolName, masks.error());
  nlohmann::json report;
  report["machine"] = machineInfo();
  report["build"] = buildInfo();
  report["terrain"] = terrain.value();
  report["mesh"] = mesh.value();
  report["masks"] = masks.value();
  if (vtp::Status s = benchColliders(world_path, seed, report); !s) return fail(kToolName, s.error());
  if (auto s = writeJson(report, json_path); !s) return fail(kToolName, s.error());
  return kExitOk;
}
