// `vtp-world check FILE` and `vtp-world copy IN OUT`: full validation of a world file, and load-then-save (which
// rewrites a file in canonical form, or with --salvage, recovers what is left of a damaged one).
#include <cstdio>
#include <memory>
#include <string>

#include "cli.h"
#include "commands.h"

namespace vtp::tools::world {
namespace {

struct CheckArgs {
  std::string file;
  bool salvage = false;
  std::string json;
};

struct CopyArgs {
  std::string in, out;
  bool salvage = false;
  std::string json;
};

int runCheck(const CheckArgs& args) {
  if (auto code = refuseSharedPaths(kToolName, {{"FILE", args.file}}, {{"--json", args.json}})) return *code;
  if (auto code = refuseUnwritable(kToolName, {{"--json", args.json}})) return *code;
  nlohmann::json report = reportHeader("check");
  report["file"] = jsonText(args.file);
  report["salvage"] = args.salvage;
  Result<terrain::LoadedWorld> loaded = loadWorld(args.file, args.salvage);
  if (!loaded) {
    report["valid"] = false;
    report["error"] = jsonText(loaded.error().message);
    report["bad_chunks"] = nlohmann::json::array();
    (void)writeReport(report, args.json);
    return fail(kToolName, loaded.error());
  }
  const std::vector<terrain::BadChunk>& bad = loaded->bad_chunks;
  report["valid"] = bad.empty();
  report["chunks"] = loaded->world->stats().stored_chunks;
  report["bad_chunks"] = badChunksJson(bad);
  if (const int code = writeReport(report, args.json); code != kExitOk) return code;
  if (!bad.empty()) {
    printBadChunks(bad);
    return fail(kToolName, args.file + ": " + std::to_string(bad.size()) + " bad chunk record(s)", kExitInvalidData);
  }
  if (args.json != "-") {
    std::printf("%s: ok (%zu chunks)\n", args.file.c_str(), loaded->world->stats().stored_chunks);
  }
  return kExitOk;
}

int runCopy(const CopyArgs& args) {
  // OUT may be IN (the copy replaces it atomically); the report may be neither.
  if (auto code = refuseSharedPaths(kToolName, {{"IN", args.in}, {"OUT", args.out}}, {{"--json", args.json}})) {
    return *code;
  }
  if (auto code = refuseUnwritable(kToolName, {{"--json", args.json}})) return *code;
  Result<terrain::LoadedWorld> loaded = loadWorld(args.in, args.salvage);
  if (!loaded) return fail(kToolName, loaded.error());
  printBadChunks(loaded->bad_chunks);
  if (Status s = terrain::saveWorldFile(*loaded->world, args.out); !s) return fail(kToolName, s.error());
  nlohmann::json report = reportHeader("copy");
  report["in"] = jsonText(args.in);
  report["out"] = jsonText(args.out);
  report["chunks"] = loaded->world->stats().stored_chunks;
  report["bad_chunks"] = badChunksJson(loaded->bad_chunks);
  if (args.json != "-") {
    std::printf("copied %s to %s (%zu chunks", args.in.c_str(), args.out.c_str(),
                loaded->world->stats().stored_chunks);
    if (!loaded->bad_chunks.empty()) std::printf(", %zu bad chunks replaced by air", loaded->bad_chunks.size());
    std::printf(")\n");
  }
  return writeReport(report, args.json);
}

}  // namespace

Command addCheckCommand(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check", "Validate a world file completely: exit 0 if valid, else 1 with the problem on stderr");
  cmd->add_option("FILE", args->file, "World file (.vtw)")->required();
  cmd->add_flag("--salvage", args->salvage,
                "Load past bad chunk records and list each on stderr (still exit 1 if there are any)");
  addJsonOption(*cmd, args->json);
  return {cmd, [args] { return runCheck(*args); }};
}

Command addCopyCommand(CLI::App& app) {
  auto args = std::make_shared<CopyArgs>();
  CLI::App* cmd = app.add_subcommand("copy", "Load a world file and save it again (atomically) as OUT");
  cmd->add_option("IN", args->in, "World file to read")->required();
  cmd->add_option("OUT", args->out, "World file to write (replaced atomically)")->required();
  cmd->add_flag("--salvage", args->salvage,
                "Replace bad chunk records with air, list them on stderr, and save the rest");
  addJsonOption(*cmd, args->json);
  return {cmd, [args] { return runCopy(*args); }};
}

}  // namespace vtp::tools::world
