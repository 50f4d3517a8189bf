#pragma once
// Shared command-line handling for the tools (CONVENTIONS "Command-line tools"): CLI11 parsing with vtp's exit codes,
// and parsers for the `--box` and `--size` value formats.

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "vtp/terrain/coords.h"
#include "vtp/terrain/status.h"

namespace vtp::tools {

/// Exit codes shared by every tool.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalidData = 1;
inline constexpr int kExitUsage = 2;

/// Parses argv into `app`. Returns nullopt when the caller should go on; otherwise the exit code to return now
/// (0 after --help, 2 after a usage error, with a one-line message on stderr).
std::optional<int> parseArgs(CLI::App& app, int argc, char** argv);

/// Prints "<tool>: <message>" on stderr and returns `code`.
int fail(const char* tool, const std::string& message, int code);
int fail(const char* tool, const Error& error, int code = kExitInvalidData);

/// "x0,y0,z0,x1,y1,z1" in voxels, max exclusive. kInvalidArgument on anything else or an empty box.
Result<terrain::VoxelBox> parseBox(const std::string& text);
/// "X,Y,Z" in voxels, each >= 1.
Result<terrain::VoxelCoord> parseSize(const std::string& text);

}  // namespace vtp::tools
