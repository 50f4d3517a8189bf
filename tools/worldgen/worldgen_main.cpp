// vtp-worldgen: writes a deterministic procedural world file (.vtw) from a preset and a seed, and optionally a JSON
// summary. Exit codes (tools/README.md): 0 written, 1 the world could not be made or saved, 2 usage error.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "cli.h"
#include "report.h"
#include "terrain_generator.h"
#include "terrain_layout.h"
#include "tool.h"
#include "vtp/terrain/hash.h"
#include "vtp/terrain/world_file.h"

const char* const kToolName = "vtp-worldgen";

namespace {

using namespace vtp;

struct FileDigest {
  std::uint64_t hash = terrain::kFnvOffset;  // FNV-1a 64 of every byte
  std::uint64_t bytes = 0;
};

// Digest of a file's exact bytes, read back after the save so the summary describes what is on disk.
Result<FileDigest> digestFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{ErrorCode::kIo, "cannot read back " + path, {}};
  FileDigest digest;
  std::vector<char> block(1 << 16);
  while (in) {
    in.read(block.data(), std::streamsize(block.size()));
    const auto n = std::size_t(in.gcount());
    digest.hash = terrain::fnv1a64({reinterpret_cast<const std::uint8_t*>(block.data()), n}, digest.hash);
    digest.bytes += n;
  }
  if (in.bad()) return Error{ErrorCode::kIo, "cannot read back " + path, {}};
  return digest;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int toolMain(int argc, char** argv) {
  using namespace vtp::tools;
  using namespace vtp::worldgen;
  CLI::App app{"Generates a deterministic procedural voxel world file (.vtw).", kToolName};
  std::string preset_text = "default", seed_text = "1", out_path, size_text, json_path;
  app.add_option("--preset", preset_text,
                 "World to make: default (256x96x256 terrain), large (1024x128x1024 terrain), flat (rock below "
                 "y=0), empty")
      ->check(CLI::IsMember(std::vector<std::string>(kPresetNames.begin(), kPresetNames.end())))
      ->default_str("default");
  app.add_option("--seed", seed_text, "Seed of the procedural terrain, 0 .. 2^64-1 (default 1); same seed, same bytes");
  app.add_option("--out", out_path, "World file to write (.vtw)")->required();
  app.add_option("--size", size_text,
                 "X,Y,Z in voxels for flat and empty (default 64,32,64); x and z centred on 0, "
                 "y from -Y/2");
  app.add_option("--json", json_path, "Also write a JSON summary to this path ('-' = stdout)");
  if (auto code = parseArgs(app, argc, argv)) return *code;
  if (auto code = refuseSharedPaths(kToolName, {}, {{"--out", out_path}, {"--json", json_path}})) return *code;

  // CLI11 checked the preset name; the seed and size are checked here, all before any work (exit 2).
  WorldgenParams params;
  params.preset = *parsePreset(preset_text);
  const Result<std::uint64_t> seed = parseSeed(seed_text);
  if (!seed) return fail(kToolName, seed.error(), kExitUsage);
  params.seed = *seed;
  params.size = presetSize(params.preset);
  if (!size_text.empty()) {
    if (!presetTakesSize(params.preset)) {
      return fail(kToolName, "--size applies to --preset flat and empty only", kExitUsage);
    }
    auto size = parseSize(size_text);
    if (!size) return fail(kToolName, size.error(), kExitUsage);
    params.size = *size;
  }
  if (Status s = validateParams(params); !s) return fail(kToolName, s.error(), kExitUsage);
  if (auto code = refuseUnwritable(kToolName, {{"--json", json_path}})) return *code;

  // Generate, save atomically, then describe the file as written.
  const auto start = std::chrono::steady_clock::now();
  auto world = generateWorld(params);
  if (!world) return fail(kToolName, world.error());
  const double generate_ms = millisecondsSince(start);

  const auto save_start = std::chrono::steady_clock::now();
  if (Status s = terrain::saveWorldFile(**world, out_path); !s) return fail(kToolName, s.error());
  const double save_ms = millisecondsSince(save_start);

  auto digest = digestFile(out_path);
  if (!digest) return fail(kToolName, digest.error());
  const std::string hash = terrain::hashToHex(digest->hash);
  const terrain::WorldStats stats = (*world)->stats();

  // One line for people, unless stdout carries the JSON.
  if (json_path != "-") {
    std::printf("%s: preset %s, seed %llu, %dx%dx%d voxels, %zu chunks, %llu bytes, hash %s\n", out_path.c_str(),
                std::string(presetName(params.preset)).c_str(), static_cast<unsigned long long>(params.seed),
                params.size.x, params.size.y, params.size.z, stats.stored_chunks,
                static_cast<unsigned long long>(digest->bytes), hash.c_str());
  }
  if (!json_path.empty()) {
    const terrain::VoxelBox box = worldBox(params.size);
    nlohmann::json report;
    report["tool"] = kToolName;
    report["preset"] = std::string(presetName(params.preset));
    report["seed"] = params.seed;
    report["size"] = {params.size.x, params.size.y, params.size.z};
    report["box"] = {{"min", {box.min.x, box.min.y, box.min.z}}, {"max", {box.max.x, box.max.y, box.max.z}}};
    report["voxel_size"] = (*world)->voxelSize();
    report["chunks"] = {
        {"stored", stats.stored_chunks}, {"uniform", stats.uniform_chunks}, {"dense", stats.dense_chunks}};
    report["out"] = jsonText(out_path);
    report["file_bytes"] = digest->bytes;
    report["file_hash"] = hash;
    report["generate_ms"] = generate_ms;
    report["save_ms"] = save_ms;
    report["machine"] = machineInfo();
    report["build"] = buildInfo();
    if (Status s = writeJson(report, json_path); !s) return fail(kToolName, s.error());
  }
  return kExitOk;
}
