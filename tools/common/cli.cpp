#include "cli.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <system_error>
#include <vector>

#include "vtp/terrain/file_replace.h"

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

// Long names of every option, in `app` and its subcommands, that takes a value.
void valueFlags(const CLI::App& app, std::vector<std::string>& out) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_items_expected_min() == 0 || opt->get_positional()) continue;
    for (const std::string& name : opt->get_lnames()) out.push_back("--" + name);
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) valueFlags(*sub, out);
}

// The argument after a flag that takes a value is always its value, even when it begins with '-' (tools/README.md).
// CLI11 would read `--script -edits.txt` as two flags, so such pairs become `--flag=value` before parsing. An empty
// value (`--json ""` or `--json=`) is a usage error: CLI11 would take the next argument as the value instead (`info
// --json "" a.vtw b.vtw` wrote the report over a.vtw).
std::vector<std::string> joinFlagValues(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> flags;
  valueFlags(app, flags);
  auto isValueFlag = [&](const std::string& name) {
    return std::find(flags.begin(), flags.end(), name) != flags.end();
  };
  std::vector<std::string> out;
  bool positional_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    positional_only = positional_only || arg == "--";
    if (!positional_only && isValueFlag(arg) && i + 1 < argc) arg += "=" + std::string(argv[++i]);
    if (!positional_only && arg.ends_with('=') && isValueFlag(arg.substr(0, arg.size() - 1))) {
      throw CLI::ValidationError(arg.substr(0, arg.size() - 1), "needs a value, not an empty one");
    }
    if (arg.empty()) throw CLI::ValidationError("an empty argument", "names no file and no value");
    out.push_back(std::move(arg));
  }
  return out;
}

}  // namespace

std::optional<int> parseArgs(CLI::App& app, int argc, char** argv) {
  try {
    std::vector<std::string> args = joinFlagValues(app, argc, argv);
    std::reverse(args.begin(), args.end());  // CLI11 takes the vector reversed
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    // CLI11 checks required arguments before unknown ones, so `vtp-world bogus`, `vtp-world info --frob` and
    // `vtp-profile --frob` were told only that a subcommand, FILE or WORLD is required; the unknown word is the better
    // message. Unknown words stay with the innermost command parsed.
    const std::vector<CLI::App*> parsed = app.get_subcommands();
    const CLI::App& where = parsed.empty() ? app : *parsed.back();
    const bool wants_subcommand = parsed.empty() && !app.get_subcommands([](const CLI::App*) { return true; }).empty();
    const std::vector<std::string> extra = where.remaining();
    if (!extra.empty() && (extra[0].starts_with('-') || wants_subcommand)) {
      const char* kind = extra[0].starts_with('-') ? "option" : "subcommand";
      std::fprintf(stderr, "%s: unknown %s '%s' (see --help)\n", app.get_name().c_str(), kind, extra[0].c_str());
    } else {
      std::fprintf(stderr, "%s: %s (see --help)\n", app.get_name().c_str(), e.what());
    }
    return kExitUsage;
  }
  return std::nullopt;
}

namespace {

namespace fs = std::filesystem;

// "-" (stdin or stdout) or no path at all: nothing on disk to compare or probe.
bool notAFile(const std::string& path) { return path.empty() || path == "-"; }

// A device, FIFO or socket (/dev/null, a pipe, a terminal): written as it comes, never "the same file" as another
// path, nothing to probe.
bool special(const fs::file_status& s) { return fs::exists(s) && !fs::is_regular_file(s) && !fs::is_directory(s); }

// Whether two paths name one file: the same resolved path, or (both existing) the same inode. Special files never
// count (/dev/null twice, or /dev/stdout and /dev/stderr on one terminal, are fine).
bool sameFile(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const fs::file_status sa = fs::status(a, ea), sb = fs::status(b, eb);
  if (special(sa) || special(sb)) return false;
  if (fs::exists(sa) && fs::exists(sb) && fs::equivalent(a, b, ea)) return true;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ea), ea);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b, eb), eb);
  return !ea && !eb && ca == cb;
}

}  // namespace

std::optional<int> refuseSharedPaths(const char* tool, std::initializer_list<NamedPath> inputs,
                                     std::initializer_list<NamedPath> outputs) {
  for (auto out = outputs.begin(); out != outputs.end(); ++out) {
    if (notAFile(out->path)) continue;
    for (const NamedPath& in : inputs) {
      if (!notAFile(in.path) && sameFile(out->path, in.path)) {
        return fail(tool, std::string(out->name) + " names the same file as " + in.name + " (" + out->path + ")",
                    kExitUsage);
      }
    }
    for (auto other = std::next(out); other != outputs.end(); ++other) {
      if (!notAFile(other->path) && sameFile(out->path, other->path)) {
        return fail(tool, std::string(out->name) + " and " + other->name + " name the same file (" + out->path + ")",
                    kExitUsage);
      }
    }
  }
  return std::nullopt;
}

std::optional<int> refuseUnwritable(const char* tool, std::initializer_list<NamedPath> outputs) {
  for (const NamedPath& out : outputs) {
    if (notAFile(out.path)) continue;
    if (terrain::namesStream(out.path)) continue;  // written straight through (OutputFile)
    // As the output will be written: a temp file created beside it (and removed again here), the checks of a
    // rename that is bound to fail made.
    Result<terrain::FileReplacement> probe = terrain::FileReplacement::open(out.path);
    if (!probe) return fail(tool, std::string(out.name) + ": " + probe.error().message, kExitInvalidData);
  }
  return std::nullopt;
}

Result<std::istream*> openTextInput(const std::string& path, const char* what, std::ifstream& file) {
  if (path == "-") return &std::cin;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return Error{ErrorCode::kIo, std::string(what) + " " + path + " is a directory", {}};
  }
  file.open(path, std::ios::binary);
  if (!file) return Error{ErrorCode::kIo, std::string("cannot open ") + what + " " + path, {}};
  return &file;
}

Result<std::string> readTextFile(const std::string& path, const char* what) {
  std::ifstream file;
  Result<std::istream*> in = openTextInput(path, what, file);
  if (!in) return in.error();
  std::string text;
  std::array<char, 1 << 16> block;
  for (;;) {
    (*in)->read(block.data(), block.size());
    const std::size_t n = std::size_t((*in)->gcount());
    if (n == 0) break;
    if (text.size() + n > kMaxTextFileBytes) {
      return Error{ErrorCode::kLimitExceeded,
                   std::string(what) + " " + path + " is larger than " + std::to_string(kMaxTextFileBytes >> 20) +
                       " MiB",
                   {}};
    }
    text.append(block.data(), n);
  }
  if ((*in)->bad()) return Error{ErrorCode::kIo, std::string("cannot read ") + what + " " + path, {}};
  return text;
}

int fail(const char* tool, const std::string& message, int code) {
  std::fprintf(stderr, "%s: %s\n", tool, message.c_str());
  return code;
}

int fail(const char* tool, const Error& error, int code) { return fail(tool, error.message, code); }

Result<std::uint64_t> parseSeed(const std::string& text) {
  std::uint64_t seed = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, seed);
  if (error != std::errc{} || stop != end) {
    return Error{ErrorCode::kInvalidArgument, "--seed wants an integer in 0 .. 2^64-1, not '" + text + "'", {}};
  }
  return seed;
}

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
