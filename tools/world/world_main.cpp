// vtp-world: inspect, validate, copy and script-edit world files. This file builds the command line and dispatches to
// the subcommand that was named; each subcommand lives in its own file (commands.h).
#include <string>
#include <vector>

#include "cli.h"
#include "commands.h"
#include "tool.h"

const char* const kToolName = "vtp-world";

namespace {

// Flags whose next argument is always their value, even when it begins with '-' (CONVENTIONS "Command-line tools").
// CLI11 would read `--script -edits.txt` as two flags, so such pairs are joined into `--flag=value` before parsing.
std::vector<std::string> joinFlagValues(int argc, char** argv) {
  static const char* const kValueFlags[] = {"--json", "--script"};
  std::vector<std::string> args(argv, argv + argc);
  std::vector<std::string> out;
  out.reserve(args.size());
  bool positional_only = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i > 0 && !positional_only && args[i] == "--") positional_only = true;
    bool joined = false;
    if (i > 0 && !positional_only && i + 1 < args.size()) {
      for (const char* flag : kValueFlags) {
        if (args[i] == flag) {
          out.push_back(args[i] + "=" + args[i + 1]);
          ++i;
          joined = true;
          break;
        }
      }
    }
    if (!joined) out.push_back(args[i]);
  }
  return out;
}

}  // namespace

int toolMain(int argc, char** argv) {
  using namespace vtp::tools;
  CLI::App app{"vtp-world: inspect, validate, copy and script-edit vtp world files (.vtw).\n"
               "Exit codes: 0 ok, 1 invalid data (bad file, bad script), 2 usage error.",
               kToolName};
  app.require_subcommand(1);
  app.fallthrough(false);
  const world::Command commands[] = {world::addInfoCommand(app), world::addCheckCommand(app),
                                     world::addCopyCommand(app), world::addEditCommand(app)};

  std::vector<std::string> args = joinFlagValues(argc, argv);
  std::vector<char*> arg_ptrs;
  for (std::string& a : args) arg_ptrs.push_back(a.data());
  if (auto code = parseArgs(app, int(arg_ptrs.size()), arg_ptrs.data())) return *code;
  for (const world::Command& command : commands) {
    if (command.cli->parsed()) return command.run();
  }
  return fail(kToolName, "no subcommand given (see --help)", kExitUsage);
}
