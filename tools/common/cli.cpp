#include "cli.h"

#include <charconv>
#include <cstdio>
#include <vector>

namespace vtp::tools {
namespace {

std::optional<std::vector<std::int32_t>> parseInts(const std::string& text) {
  std::vector<std::int32_t> out;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p <= end) {
    std::int32_t v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc{}) return std::nullopt;
    out.push_back(v);
    if (next == end) return out;
    if (*next != ',') return std::nullopt;
    p = next + 1;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int> parseArgs(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s (see --help)\n", app.get_name().c_str(), e.what());
    return kExitUsage;
  }
  return std::nullopt;
}

int fail(const char* tool, const std::string& message, int code) {
  std::fprintf(stderr, "%s: %s\n", tool, message.c_str());
  return code;
}

int fail(const char* tool, const Error& error, int code) { return fail(tool, error.message, code); }

Result<terrain::VoxelBox> parseBox(const std::string& text) {
  const auto v = parseInts(text);
  if (!v || v->size() != 6) return Error{ErrorCode::kInvalidArgument, "--box wants x0,y0,z0,x1,y1,z1 (integers)", {}};
  terrain::VoxelBox box{{(*v)[0], (*v)[1], (*v)[2]}, {(*v)[3], (*v)[4], (*v)[5]}};
  if (box.empty()) return Error{ErrorCode::kInvalidArgument, "--box is empty: each max must exceed its min", {}};
  return box;
}

Result<terrain::VoxelCoord> parseSize(const std::string& text) {
  const auto v = parseInts(text);
  if (!v || v->size() != 3 || (*v)[0] < 1 || (*v)[1] < 1 || (*v)[2] < 1) {
    return Error{ErrorCode::kInvalidArgument, "--size wants X,Y,Z (positive integers)", {}};
  }
  return terrain::VoxelCoord{(*v)[0], (*v)[1], (*v)[2]};
}

}  // namespace vtp::tools
