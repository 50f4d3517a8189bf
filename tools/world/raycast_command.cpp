// `vtp-world raycast FILE --rays RAYS.txt [--all] [--water] [--json PATH]`: rays against a world's collision surface,
// for an engineer checking a query without writing code. RAYS.txt holds one segment per line, `x0 y0 z0 x1 y1 z1` in
// world units ('-' reads stdin; blank lines and lines starting with '#' are skipped). One JSON line per ray on stdout
// (format: tools/README.md): the closest hit, or with --all every hit in increasing t, t being the fraction of the
// segment. --water adds the segment's first entry into water (physics::raycastWater) as one more hit with "water":
// true, material "water", the normal of the water boundary crossed and front_face true, in t order among the others. A
// bad line prints {"ray": i, "error": "..."} and the exit code is 1 once every ray has been answered.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "commands.h"
#include "vtp/physics/terrain_physics.h"
#include "vtp/physics/water.h"

namespace vtp::tools::world {
namespace {

struct RaycastArgs {
  std::string file, rays, json = "-";
  bool all = false;
  bool water = false;
};

nlohmann::ordered_json hitJson(const physics::WorldRayHit& h, const terrain::MaterialTable& materials) {
  const std::uint8_t m = h.hit.material;
  return nlohmann::ordered_json{{"t", h.hit.t},
          {"point", {h.hit.point[0], h.hit.point[1], h.hit.point[2]}},
          {"normal", {h.hit.normal[0], h.hit.normal[1], h.hit.normal[2]}},
          {"material", materials.contains(m) ? materials[m].name : "m" + std::to_string(int(m))},
          {"material_id", int(m)},
          {"chunk", {h.chunk.x, h.chunk.y, h.chunk.z}},
          {"water", false},
          {"front_face", h.hit.front_face}};
}

nlohmann::ordered_json waterJson(const physics::WaterHit& h) {
  return nlohmann::ordered_json{{"t", h.t},
          {"point", {h.point[0], h.point[1], h.point[2]}},
          {"normal", {h.normal[0], h.normal[1], h.normal[2]}},
          {"material", "water"},
          {"material_id", int(terrain::kWaterMaterial)},
          {"chunk", {h.chunk.x, h.chunk.y, h.chunk.z}},
          {"water", true},
          {"front_face", true}};
}

int runRaycast(const RaycastArgs& args) {
  if (auto code = refuseSharedPaths(kToolName, {{"FILE", args.file}, {"--rays", args.rays}}, {{"--json", args.json}})) {
    return *code;
  }
  if (auto code = refuseUnwritable(kToolName, {{"--json", args.json}})) return *code;
  std::ifstream file;  // rays are answered line by line as they arrive, from stdin or a file
  Result<std::istream*> opened = openTextInput(args.rays, "rays file", file);
  if (!opened) return fail(kToolName, opened.error());
  std::istream& in = **opened;
  // Rays from a pipe, a FIFO or a terminal are answered one by one, each flushed before the next line is waited for
  // (however much of it has arrived); from a regular file the answers are buffered.
  struct stat input {};
  const bool streamed = args.rays == "-" ? ::fstat(STDIN_FILENO, &input) != 0 || !S_ISREG(input.st_mode)
                                         : ::stat(args.rays.c_str(), &input) != 0 || !S_ISREG(input.st_mode);
  Result<terrain::LoadedWorld> loaded = loadWorld(args.file, false);
  if (!loaded) return fail(kToolName, loaded.error());
  terrain::World& world = *loaded->world;
  auto physics = physics::TerrainPhysics::create(world);
  if (!physics) return fail(kToolName, physics.error());
  // The lines' file is opened (truncated) only once the world is loaded and the rays file opened.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_out(nullptr, std::fclose);
  if (args.json != "-") {
    file_out.reset(std::fopen(args.json.c_str(), "w"));
    if (!file_out) return fail(kToolName, "cannot write " + args.json + ": " + std::strerror(errno), kExitInvalidData);
  }
  std::FILE* const sink = file_out ? file_out.get() : stdout;

  bool bad = false;
  int index = 0;
  std::string line;
  std::vector<physics::WorldRayHit> hits;
  while (std::getline(in, line)) {
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    nlohmann::ordered_json out;  // keys in the order tools/README.md shows
    out["ray"] = index++;
    std::istringstream fields(line);
    double p[6];
    std::string extra;
    bool parsed = true;
    for (double& v : p) parsed = parsed && static_cast<bool>(fields >> v);
    if (!parsed || (fields >> extra)) {
      out["error"] = "expected six numbers x0 y0 z0 x1 y1 z1";
    } else {
      const physics::Ray ray{{p[0], p[1], p[2]}, {p[3] - p[0], p[4] - p[1], p[5] - p[2]}, 1.0};
      Status s;
      if (args.all) {
        s = (*physics)->raycastAll(ray, hits);
      } else {
        hits.clear();
        physics::WorldRayHit hit;
        Result<bool> found = (*physics)->raycastClosest(ray, hit);
        if (!found) s = found.error();
        else if (*found) hits.push_back(hit);
      }
      physics::WaterHit water_hit;
      bool wet = false;
      if (s && args.water) {
        Result<bool> found = physics::raycastWater(**physics, ray, water_hit);
        if (!found) s = found.error();
        else wet = *found;
      }
      if (!s) {
        out["error"] = jsonText(s.error().message);
      } else {
        out["hits"] = nlohmann::ordered_json::array();
        // The water entry goes before the first surface hit at a larger t.
        const auto at = std::find_if(hits.begin(), hits.end(),
                                     [&](const physics::WorldRayHit& h) { return h.hit.t > water_hit.t; });
        for (auto it = hits.begin(); it != hits.end(); ++it) {
          if (wet && it == at) out["hits"].push_back(waterJson(water_hit));
          out["hits"].push_back(hitJson(*it, world.materials()));
        }
        if (wet && at == hits.end()) out["hits"].push_back(waterJson(water_hit));
      }
    }
    bad = bad || out.contains("error");
    std::fprintf(sink, "%s\n", out.dump().c_str());
    if (streamed) std::fflush(sink);
  }
  if (in.bad()) return fail(kToolName, "cannot read rays file " + args.rays, kExitInvalidData);
  if (std::fflush(sink) != 0 || std::ferror(sink)) {
    return fail(kToolName, "cannot write " + (args.json == "-" ? std::string("stdout") : args.json), kExitInvalidData);
  }
  return bad ? kExitInvalidData : kExitOk;
}

}  // namespace

Command addRaycastCommand(CLI::App& app) {
  auto args = std::make_shared<RaycastArgs>();
  CLI::App* cmd = app.add_subcommand("raycast", "Cast rays from a file against the collision surface; one JSON line per ray");
  cmd->add_option("FILE", args->file, "World file (.vtw)")->required();
  cmd->add_option("--rays", args->rays, "Segments, one per line: x0 y0 z0 x1 y1 z1 in world units ('-' = stdin)")
      ->type_name("RAYS.txt")
      ->required();
  cmd->add_flag("--all", args->all, "Every hit along each segment in increasing t (default: the closest)");
  cmd->add_flag("--water", args->water, "Also the segment's first entry into water, as a hit with \"water\": true");
  cmd->add_option("--json", args->json, "Write the JSON lines to PATH ('-' = stdout, the default)")
      ->type_name("PATH");
  return {cmd, [args] { return runRaycast(*args); }};
}

}  // namespace vtp::tools::world
