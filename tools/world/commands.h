#pragma once
// vtp-world's subcommands. Each add*Command registers its CLI11 subcommand on the app and returns it with the function
// that runs it once parsing has succeeded; world_main.cpp runs the one that was selected. Shared loading and reporting
// helpers (world_files.cpp) keep every subcommand's errors and exit codes alike.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "report.h"  // jsonText
#include "tool.h"
#include "vtp/terrain/status.h"
#include "vtp/terrain/world_file.h"

namespace vtp::tools::world {

/// A registered subcommand: `cli` is its CLI11 node (parsed() tells whether it was named), `run` runs it after a
/// successful parse and returns the exit code (kExitOk or kExitInvalidData; usage errors are the parser's).
struct Command {
  CLI::App* cli = nullptr;
  std::function<int()> run;
};

Command addInfoCommand(CLI::App& app);
Command addCheckCommand(CLI::App& app);
Command addCopyCommand(CLI::App& app);
Command addEditCommand(CLI::App& app);
Command addExportObjCommand(CLI::App& app);
Command addRaycastCommand(CLI::App& app);

/// loadWorldFile, but refusing anything that is not a regular file before opening it (opening a FIFO would block).
Result<terrain::LoadedWorld> loadWorld(const std::filesystem::path& path, bool salvage);

/// Prints one stderr line per chunk record that salvage mode replaced with air.
void printBadChunks(const std::vector<terrain::BadChunk>& bad_chunks);

/// The bad chunks as JSON: [{"chunk": [x,y,z], "byte_offset": n, "problem": "..."}].
nlohmann::json badChunksJson(const std::vector<terrain::BadChunk>& bad_chunks);

/// A report's common part: {"tool": "vtp-world", "command": command, "machine": ..., "build": ...}.
nlohmann::json reportHeader(const char* command);

/// Writes a report to `path` ('-' is stdout); on failure prints the error. Returns an exit code.
int writeReport(const nlohmann::json& report, const std::string& path);

/// Adds `--json PATH` to a subcommand.
void addJsonOption(CLI::App& command, std::string& path);

}  // namespace vtp::tools::world
