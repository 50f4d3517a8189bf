// `vtp-world edit IN OUT --script EDITS.txt`: replays an edit script (tools/README.md "Edit scripts") on a world
// file. The whole script is one World::apply batch, so a bad line or a rejected edit leaves nothing changed and nothing
// saved.
#include <cstdio>
#include <iterator>
#include <memory>
#include <string>

#include "cli.h"
#include "commands.h"
#include "vtp/terrain/edit_script.h"

namespace vtp::tools::world {
namespace {

struct EditArgs {
  std::string in, out, script;
  std::string json;
};

int runEdit(const EditArgs& args) {
  // OUT may be IN (the edit replaces it atomically), but not the script; the report may be none of them.
  if (auto code =
          refuseSharedPaths(kToolName, {{"--script", args.script}}, {{"OUT", args.out}, {"--json", args.json}})) {
    return *code;
  }
  if (auto code = refuseSharedPaths(kToolName, {{"IN", args.in}}, {{"--json", args.json}})) return *code;
  if (auto code = refuseUnwritable(kToolName, {{"--json", args.json}})) return *code;
  Result<terrain::LoadedWorld> loaded = loadWorld(args.in, false);
  if (!loaded) return fail(kToolName, loaded.error());
  terrain::World& world = *loaded->world;

  Result<std::string> text = readTextFile(args.script, "script");
  if (!text) return fail(kToolName, text.error());
  Result<terrain::EditScript> script = terrain::parseEditScript(*text, world.materials());
  if (!script) return fail(kToolName, script.error());
  Result<terrain::EditResult> applied = terrain::applyEditScript(world, *script);
  if (!applied) return fail(kToolName, applied.error());
  if (Status s = terrain::saveWorldFile(world, args.out); !s) return fail(kToolName, s.error());

  const terrain::VoxelBox& changed = applied->changed;
  nlohmann::json report = reportHeader("edit");
  report["in"] = jsonText(args.in);
  report["out"] = jsonText(args.out);
  report["script"] = jsonText(args.script);
  report["edits"] = script->edits.size();
  report["changed_chunks"] = applied->chunks.size();
  report["changed_voxels_box"] = changed.empty() ? nlohmann::json(nullptr)
                                                 : nlohmann::json{{"min", {changed.min.x, changed.min.y, changed.min.z}},
                                                                  {"max", {changed.max.x, changed.max.y, changed.max.z}}};
  if (args.json != "-") {
    std::printf("applied %zu edit(s) from %s: %zu chunk(s) changed; wrote %s\n", script->edits.size(),
                args.script.c_str(), applied->chunks.size(), args.out.c_str());
  }
  return writeReport(report, args.json);
}

}  // namespace

Command addEditCommand(CLI::App& app) {
  auto args = std::make_shared<EditArgs>();
  CLI::App* cmd = app.add_subcommand(
      "edit", "Apply an edit script to IN as one batch and save the result as OUT; on a bad line nothing is saved");
  cmd->add_option("IN", args->in, "World file to read")->required();
  cmd->add_option("OUT", args->out, "World file to write (replaced atomically)")->required();
  cmd->add_option("--script", args->script,
                  "Edit script, one edit per line ('-' = stdin); see tools/README.md \"Edit scripts\"")
      ->type_name("EDITS.txt")
      ->required();
  addJsonOption(*cmd, args->json);
  return {cmd, [args] { return runEdit(*args); }};
}

}  // namespace vtp::tools::world
