// `vtp-world export-obj FILE [--box x0,y0,z0,x1,y1,z1] --out OUT.obj [--png OUT.png] [--json PATH]`: the collision
// triangles of a world (or of the chunks a box touches) as a Wavefront OBJ file, and optionally a shaded picture of
// them, so a person can look at exactly what physics collides with.
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli.h"
#include "collision_mesh.h"
#include "commands.h"
#include "obj_writer.h"
#include "png_writer.h"
#include "software_raster.h"
#include "vtp/mesher/surface_mesher.h"

namespace vtp::tools::world {
namespace {

struct ExportArgs {
  std::string file;
  std::string box;
  std::string out;
  std::string png;
  std::string png_size = "1024x768";
  std::string png_view = "45,35";
  std::string json;
};

// Two numbers separated by `sep`: "1024x768", "45,35".
template <class T>
std::optional<std::array<T, 2>> parsePair(const std::string& text, char sep) {
  const std::size_t at = text.find(sep);
  if (at == std::string::npos) return std::nullopt;
  std::array<T, 2> v{};
  const char* end = text.data() + text.size();
  auto first = std::from_chars(text.data(), text.data() + at, v[0]);
  auto second = std::from_chars(text.data() + at + 1, end, v[1]);
  if (first.ec != std::errc{} || first.ptr != text.data() + at || second.ec != std::errc{} || second.ptr != end) {
    return std::nullopt;
  }
  return v;
}

// A colour per material: the default table's and worldgen's materials by name, others from a hash of the id.
Rgb materialColour(const terrain::MaterialTable& table, std::uint8_t id) {
  const std::string name = table.contains(id) ? table[id].name : std::string();
  if (name == "rock") return {132, 128, 122};
  if (name == "dirt") return {139, 100, 64};
  if (name == "sand") return {218, 198, 140};
  if (name == "grass") return {98, 156, 62};
  if (name == "ore") return {176, 92, 58};
  if (name == "coal") return {52, 52, 58};
  if (name == "iron") return {168, 120, 96};
  const std::uint32_t h = std::uint32_t(id) * 2654435761u;
  return {std::uint8_t(96 + (h >> 8) % 128), std::uint8_t(96 + (h >> 16) % 128), std::uint8_t(96 + (h >> 24) % 128)};
}

Status renderPng(const CollisionMesh& mesh, const terrain::MaterialTable& materials, const RenderView& view,
                 const std::string& path) {
  std::vector<std::array<double, 3>> positions;
  positions.reserve(mesh.positions.size());
  for (const auto& p : mesh.positions) {
    constexpr double kScale = mesher::kPositionScale;
    positions.push_back({double(p[0]) / kScale, double(p[1]) / kScale, double(p[2]) / kScale});
  }
  std::vector<Rgb> colours;
  colours.reserve(mesh.materials.size());
  for (const std::uint8_t m : mesh.materials) colours.push_back(materialColour(materials, m));
  return writePng(renderOblique(positions, mesh.triangles, colours, view), path);
}

int runExport(const ExportArgs& args) {
  if (auto code = refuseSharedPaths(kToolName, {{"FILE", args.file}},
                                    {{"--out", args.out}, {"--png", args.png}, {"--json", args.json}})) {
    return *code;
  }
  std::optional<terrain::VoxelBox> box;
  if (!args.box.empty()) {
    Result<terrain::VoxelBox> parsed = parseBox(args.box);
    if (!parsed) return fail(kToolName, parsed.error(), kExitUsage);
    box = *parsed;
  }
  RenderView view;
  if (!args.png.empty()) {
    const auto size = parsePair<int>(args.png_size, 'x');
    if (!size || (*size)[0] < 16 || (*size)[0] > 8192 || (*size)[1] < 16 || (*size)[1] > 8192) {
      return fail(kToolName, "--png-size wants WxH, each 16..8192 pixels", kExitUsage);
    }
    const auto angles = parsePair<double>(args.png_view, ',');
    if (!angles || !std::isfinite((*angles)[0]) || !((*angles)[1] >= 1 && (*angles)[1] <= 89)) {
      return fail(kToolName, "--png-view wants AZIMUTH,ELEVATION in degrees, elevation 1..89", kExitUsage);
    }
    view.width = (*size)[0];
    view.height = (*size)[1];
    view.azimuth_deg = (*angles)[0];
    view.elevation_deg = (*angles)[1];
  }
  if (auto code = refuseUnwritable(kToolName, {{"--out", args.out}, {"--png", args.png}, {"--json", args.json}})) {
    return *code;
  }

  Result<terrain::LoadedWorld> loaded = loadWorld(args.file, false);
  if (!loaded) return fail(kToolName, loaded.error());
  const terrain::World& world = *loaded->world;
  Result<CollisionMesh> mesh = collectCollisionMesh(world, box);
  if (!mesh) return fail(kToolName, mesh.error());

  char header[512];
  std::snprintf(header, sizeof header,
                "vtp-world export-obj: collision triangles (the mesher's solid surface)\n"
                "units: voxels (1 voxel = %.17g world units); vertices are exact multiples of 1/%d\n"
                "%zu vertices, %zu triangles from %zu chunks; one group per material; normals out of the solid",
                world.voxelSize(), mesher::kPositionScale, mesh->positions.size(), mesh->triangles.size(),
                mesh->surface_chunks);
  if (Status s = writeObj(*mesh, world.materials(), header, args.out); !s) return fail(kToolName, s.error());
  if (!args.png.empty()) {
    if (Status s = renderPng(*mesh, world.materials(), view, args.png); !s) return fail(kToolName, s.error());
  }

  nlohmann::json report = reportHeader("export-obj");
  report["file"] = jsonText(args.file);
  report["box"] = box ? nlohmann::json{{"min", {box->min.x, box->min.y, box->min.z}},
                                       {"max", {box->max.x, box->max.y, box->max.z}}}
                      : nlohmann::json(nullptr);
  report["out"] = jsonText(args.out);
  report["png"] = args.png.empty() ? nlohmann::json(nullptr) : nlohmann::json(jsonText(args.png));
  report["chunks_meshed"] = mesh->chunks_meshed;
  report["surface_chunks"] = mesh->surface_chunks;
  report["vertices"] = mesh->positions.size();
  report["triangles"] = mesh->triangles.size();
  nlohmann::json per_material = nlohmann::json::object();
  for (const std::uint8_t m : mesh->materials) {
    const std::string name =
        world.materials().contains(m) ? world.materials()[m].name : "m" + std::to_string(int(m));
    per_material[name] = per_material.value(name, 0) + 1;
  }
  report["triangles_by_material"] = per_material;
  if (args.json != "-") {
    std::printf("wrote %s: %zu vertices, %zu triangles from %zu chunks%s%s\n", args.out.c_str(),
                mesh->positions.size(), mesh->triangles.size(), mesh->surface_chunks,
                args.png.empty() ? "" : "; picture ", args.png.c_str());
  }
  return writeReport(report, args.json);
}

}  // namespace

Command addExportObjCommand(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export-obj", "Write the collision triangles (the mesher's solid surface) as a Wavefront OBJ file");
  cmd->add_option("FILE", args->file, "World file (.vtw)")->required();
  cmd->add_option("--box", args->box,
                  "Only the chunks whose voxels intersect this box: x0,y0,z0,x1,y1,z1 in voxels, max exclusive "
                  "(clipped to the world's storage; default: every chunk that owns a triangle)")
      ->type_name("BOX");
  cmd->add_option("--out", args->out, "OBJ file to write (vertices in voxels, one group per material)")
      ->type_name("OUT.obj")
      ->required();
  cmd->add_option("--png", args->png, "Also render a shaded oblique view of the triangles to this PNG file")
      ->type_name("OUT.png");
  cmd->add_option("--png-size", args->png_size, "Picture size in pixels (default 1024x768)")->type_name("WxH");
  cmd->add_option("--png-view", args->png_view,
                  "Camera direction in degrees: azimuth (0 = from +z, 90 = from +x) and elevation above the horizon "
                  "(default 45,35)")
      ->type_name("AZ,EL");
  addJsonOption(*cmd, args->json);
  return {cmd, [args] { return runExport(*args); }};
}

}  // namespace vtp::tools::world
