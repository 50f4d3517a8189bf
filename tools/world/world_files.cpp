// Helpers every vtp-world subcommand shares: loading a world file safely, listing salvaged chunks, and the common
// part of the JSON reports.
#include <cstdio>
#include <system_error>

#include "cli.h"
#include "commands.h"
#include "report.h"

namespace vtp::tools::world {

Result<terrain::LoadedWorld> loadWorld(const std::filesystem::path& path, bool salvage) {
  // The loader opens before it checks the file type, and opening a FIFO blocks until a writer appears: refuse
  // anything that is not a regular file first, so `check` cannot hang whatever path it is given.
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) {
    return Error{ErrorCode::kIo, "cannot open " + path.string() + ": no such file", {}};
  }
  if (!std::filesystem::is_regular_file(st)) {
    return Error{ErrorCode::kIo, path.string() + " is not a regular file", {}};
  }
  terrain::LoadOptions options;
  options.salvage = salvage;
  return terrain::loadWorldFile(path, options);
}

void printBadChunks(const std::vector<terrain::BadChunk>& bad_chunks) {
  // The first few, one line each; a badly damaged file can hold up to LoadOptions::max_bad_chunks (--json lists all).
  constexpr std::size_t kPrinted = 20;
  for (std::size_t i = 0; i < bad_chunks.size() && i < kPrinted; ++i) {
    const terrain::BadChunk& b = bad_chunks[i];
    std::fprintf(stderr, "%s: bad chunk %d,%d,%d at byte %llu replaced by air: %s\n", kToolName, b.coord.x, b.coord.y,
                 b.coord.z, static_cast<unsigned long long>(b.byte_offset), b.problem.c_str());
  }
  if (bad_chunks.size() > kPrinted) {
    std::fprintf(stderr, "%s: and %zu more bad chunks (--json lists every one)\n", kToolName,
                 bad_chunks.size() - kPrinted);
  }
}

nlohmann::json badChunksJson(const std::vector<terrain::BadChunk>& bad_chunks) {
  nlohmann::json out = nlohmann::json::array();
  for (const terrain::BadChunk& b : bad_chunks) {
    out.push_back({{"chunk", {b.coord.x, b.coord.y, b.coord.z}}, {"byte_offset", b.byte_offset}, {"problem", jsonText(b.problem)}});
  }
  return out;
}

nlohmann::json reportHeader(const char* command) {
  return {{"tool", kToolName}, {"command", command}, {"machine", machineInfo()}, {"build", buildInfo()}};
}

int writeReport(const nlohmann::json& report, const std::string& path) {
  if (path.empty()) return kExitOk;
  if (Status s = writeJson(report, path); !s) return fail(kToolName, s.error());
  return kExitOk;
}

void addJsonOption(CLI::App& command, std::string& path) {
  command.add_option("--json", path, "Also write a JSON report to PATH ('-' = stdout)")->type_name("PATH");
}

}  // namespace vtp::tools::world
