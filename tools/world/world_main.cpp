// vtp-world: inspect, validate, copy, script-edit, export and raycast world files. This file builds the command line and
// dispatches to the subcommand that was named; each subcommand lives in its own file (commands.h).
#include "cli.h"
#include "commands.h"
#include "tool.h"

const char* const kToolName = "vtp-world";

int toolMain(int argc, char** argv) {
  using namespace vtp::tools;
  CLI::App app{"vtp-world: inspect, validate, copy, script-edit and export vtp world files (.vtw).\n"
               "Exit codes: 0 ok, 1 invalid data (bad file, bad script), 2 usage error.",
               kToolName};
  app.require_subcommand(1);
  app.fallthrough(false);
  const world::Command commands[] = {world::addInfoCommand(app), world::addCheckCommand(app),
                                     world::addCopyCommand(app), world::addEditCommand(app),
                                     world::addExportObjCommand(app), world::addRaycastCommand(app)};

  if (auto code = parseArgs(app, argc, argv)) return *code;
  for (const world::Command& command : commands) {
    if (command.cli->parsed()) return command.run();
  }
  return fail(kToolName, "no subcommand given (see --help)", kExitUsage);
}
