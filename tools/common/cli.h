#pragma once
// Shared command-line handling for the tools (tools/README.md): CLI11 parsing with vtp's exit codes,
// and parsers for the `--box` and `--size` value formats.

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <initializer_list>
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

/// A file a command reads or writes, with the argument or flag that named it (for the message).
struct NamedPath {
  const char* name;
  const std::string& path;
};
/// Checked before any work: no output names the same file as an input or as another output (writing it would destroy
/// the other: `export-obj w.vtw --out w.vtw` once replaced the world with an OBJ file). "-" (stdin or stdout) and empty
/// paths are skipped; paths are compared resolved (relative or absolute, through links). A command that replaces an
/// input on purpose (`edit IN OUT` with OUT = IN) leaves that pair out. Returns kExitUsage after a one-line message
/// when two coincide, else nullopt.
std::optional<int> refuseSharedPaths(const char* tool, std::initializer_list<NamedPath> inputs,
                                     std::initializer_list<NamedPath> outputs);

/// Checked before any work: each output can be replaced (terrain::FileReplacement::open: a temp file created beside
/// it and removed again, a directory or another user's file in a sticky directory refused). So a bad `--json` path
/// fails before a world or mesh is written, not after it. "-", empty paths, devices and FIFOs are skipped. Returns
/// kExitInvalidData after a one-line message naming the first that cannot.
std::optional<int> refuseUnwritable(const char* tool, std::initializer_list<NamedPath> outputs);

/// The most bytes readTextFile reads: a 2-million-line edit script fits. [Unit: byte]
inline constexpr std::size_t kMaxTextFileBytes = std::size_t(64) << 20;
/// The whole text of the file an argument names (`what` says which, for the message); "-" reads stdin, and a FIFO
/// works (`--script <(generate-edits)`). kIo when it cannot be opened or read, a directory included (a stream opens
/// one and reads nothing, which passed for an empty script); kLimitExceeded past kMaxTextFileBytes (`--script
/// /dev/zero` stops there).
Result<std::string> readTextFile(const std::string& path, const char* what);
/// The same file to read as it streams: &std::cin for "-", else `file` opened (its lines are answered as they come,
/// so a FIFO given by path is not waited on to its end). The same errors as readTextFile.
Result<std::istream*> openTextInput(const std::string& path, const char* what, std::ifstream& file);

/// A `--seed` value: a decimal integer in 0 .. 2^64 - 1, nothing else (CLI11 would wrap "-1" round to 2^64 - 1 and
/// clamp 2^64 and beyond to it).
Result<std::uint64_t> parseSeed(const std::string& text);

/// "x0,y0,z0,x1,y1,z1" in voxels, max exclusive. kInvalidArgument on anything else or an empty box.
Result<terrain::VoxelBox> parseBox(const std::string& text);
/// "X,Y,Z" in voxels, each >= 1.
Result<terrain::VoxelCoord> parseSize(const std::string& text);

}  // namespace vtp::tools
