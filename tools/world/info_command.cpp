// `vtp-world info FILE [--json PATH]`: what a world file holds — chunk counts by storage form, voxels per material
// over the stored chunks, the stored extent, file and memory bytes, voxel size and content hash.
#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "cli.h"
#include "commands.h"
#include "vtp/terrain/hash.h"

namespace vtp::tools::world {
namespace {

struct InfoArgs {
  std::string file;
  std::string json;
};

struct WorldSummary {
  std::uint64_t file_bytes = 0;
  terrain::WorldStats stats;
  std::array<std::uint64_t, 256> material_voxels{};  // by material id, over stored chunks (air included)
  terrain::VoxelBox extent{};                         // voxels of the stored chunks; empty when none
  std::uint64_t hash = 0;
};

WorldSummary summarise(const terrain::World& world, std::uint64_t file_bytes) {
  WorldSummary s;
  s.file_bytes = file_bytes;
  s.stats = world.stats();
  s.hash = terrain::worldHash(world);
  const terrain::WorldSnapshot snapshot = world.snapshot();
  for (const terrain::WorldSnapshot::Entry& e : snapshot.chunks()) {
    s.extent = terrain::unite(s.extent, terrain::chunkBox(e.coord));
    if (e.chunk->isUniform()) {
      s.material_voxels[e.chunk->uniformValue().material] += terrain::kChunkVolume;
    } else {
      for (const terrain::Voxel v : e.chunk->dense()) ++s.material_voxels[v.material];
    }
  }
  return s;
}

void printText(const std::string& file, const terrain::World& world, const WorldSummary& s) {
  const terrain::MaterialTable& materials = world.materials();
  std::printf("%s\n", file.c_str());
  std::printf("  file bytes      %llu\n", static_cast<unsigned long long>(s.file_bytes));
  std::printf("  voxel size      %.17g world units\n", world.voxelSize());
  std::printf("  chunks          %zu stored: %zu uniform, %zu dense\n", s.stats.stored_chunks, s.stats.uniform_chunks,
              s.stats.dense_chunks);
  std::printf("  memory bytes    %zu (chunks %zu, map %zu)\n", s.stats.chunk_bytes + s.stats.table_bytes,
              s.stats.chunk_bytes, s.stats.table_bytes);
  if (s.extent.empty()) {
    std::printf("  extent          none (all air)\n");
  } else {
    std::printf("  extent          voxels %d,%d,%d .. %d,%d,%d (max exclusive)\n", s.extent.min.x, s.extent.min.y,
                s.extent.min.z, s.extent.max.x, s.extent.max.y, s.extent.max.z);
  }
  std::printf("  content hash    %s\n", terrain::hashToHex(s.hash).c_str());
  std::printf("  materials       voxels in stored chunks\n");
  for (int id = 0; id < 256; ++id) {
    if (!materials.contains(std::uint8_t(id))) continue;
    std::printf("    %3d %-32s %llu\n", id, materials[std::uint8_t(id)].name.c_str(),
                static_cast<unsigned long long>(s.material_voxels[std::size_t(id)]));
  }
}

nlohmann::json toJson(const std::string& file, const terrain::World& world, const WorldSummary& s) {
  nlohmann::json report = reportHeader("info");
  report["file"] = jsonText(file);
  report["file_bytes"] = s.file_bytes;
  report["voxel_size"] = world.voxelSize();
  report["chunks"] = {{"stored", s.stats.stored_chunks}, {"uniform", s.stats.uniform_chunks},
                      {"dense", s.stats.dense_chunks}};
  report["memory_bytes"] = s.stats.chunk_bytes + s.stats.table_bytes;
  report["memory"] = {{"chunk_bytes", s.stats.chunk_bytes}, {"table_bytes", s.stats.table_bytes}};
  report["extent"] = s.extent.empty() ? nlohmann::json(nullptr)
                                      : nlohmann::json{{"min", {s.extent.min.x, s.extent.min.y, s.extent.min.z}},
                                                       {"max", {s.extent.max.x, s.extent.max.y, s.extent.max.z}}};
  report["content_hash"] = terrain::hashToHex(s.hash);
  // Every defined material, by name, with its voxel count over the stored chunks (zero included) and its id.
  nlohmann::json histogram = nlohmann::json::object();
  nlohmann::json ids = nlohmann::json::object();
  for (int id = 0; id < 256; ++id) {
    if (!world.materials().contains(std::uint8_t(id))) continue;
    const std::string& name = world.materials()[std::uint8_t(id)].name;
    histogram[name] = s.material_voxels[std::size_t(id)];
    ids[name] = id;
  }
  report["materials"] = histogram;
  report["material_ids"] = ids;
  return report;
}

int runInfo(const InfoArgs& args) {
  if (auto code = refuseSharedPaths(kToolName, {{"FILE", args.file}}, {{"--json", args.json}})) return *code;
  if (auto code = refuseUnwritable(kToolName, {{"--json", args.json}})) return *code;
  Result<terrain::LoadedWorld> loaded = loadWorld(args.file, false);
  if (!loaded) return fail(kToolName, loaded.error());
  std::error_code ec;
  const std::uintmax_t bytes = std::filesystem::file_size(args.file, ec);
  const WorldSummary summary = summarise(*loaded->world, ec ? 0 : bytes);
  // With the JSON on stdout the text would corrupt it; the JSON then is the whole output.
  if (args.json != "-") printText(args.file, *loaded->world, summary);
  return writeReport(toJson(args.file, *loaded->world, summary), args.json);
}

}  // namespace

Command addInfoCommand(CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand("info", "Print what a world file holds: chunks, materials, bytes, voxel size");
  cmd->add_option("FILE", args->file, "World file (.vtw)")->required();
  addJsonOption(*cmd, args->json);
  return {cmd, [args] { return runInfo(*args); }};
}

}  // namespace vtp::tools::world
