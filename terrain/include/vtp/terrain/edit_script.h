#pragma once
/// \file
/// Edit scripts: a text form of edit commands, one per line, so servers can log edits and replay them
/// (`vtp-world edit --script`). The grammar is below; tools/README.md "Edit scripts" documents it for admins.
///
///     # comment lines and trailing comments are ignored, as are blank lines
///     sphere   fill|clear|paint  center=x,y,z radius=r [material=m]
///     box      fill|clear|paint  min=x,y,z max=x,y,z [material=m]
///     cylinder fill|clear|paint  center=x,y,z radius=r height=h [material=m]
///     replace                    from=m to=m min=x,y,z max=x,y,z
///     voxel    set               at=x,y,z material=m occupancy=n
///
/// - Words are separated by spaces or tabs (a trailing CR is ignored); keys may come in any order, each exactly once.
/// - Shape coordinates, radius and height are decimal numbers in voxels (`-4`, `2.5`, `1e3`); `replace` and `voxel`
///   coordinates are integers (int32). Occupancy is an integer 0..255; occupancy 0 yields air.
/// - `material=` takes a name from the table, a decimal id, or the reserved `air` / `water`. fill and paint require
///   it; clear rejects it.
/// - The parser rejects: an unknown shape, op or key, a duplicate or missing key, a material on clear, a malformed or
///   non-finite number (`nan`, `inf`), an out-of-range integer, an undefined material, and anything left over.
///   Range checks and caps (radius, storage range, voxel and chunk counts, which materials an op accepts) are
///   World::apply's, made before anything changes; applyEditScript() maps such an error back to its line.
///
/// Thread-safety: the parsers are pure functions; applyEditScript() is one World::apply batch (see world.h).

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "vtp/terrain/edit.h"
#include "vtp/terrain/material_table.h"
#include "vtp/terrain/status.h"
#include "vtp/terrain/world.h"

namespace vtp::terrain {

/// A parsed script: the edits in file order, and the 1-based line each came from (`lines[i]` for `edits[i]`).
/// `edits` is ready to pass to World::apply as one batch.
struct EditScript {
  std::vector<EditCommand> edits;
  std::vector<std::uint32_t> lines;
};

/// Parses one line (no line break inside). Returns nullopt for a blank or comment-only line, the edit otherwise.
/// Errors (kInvalidArgument, or kUnknownMaterial from `materials`) carry a one-line message without a line number.
Result<std::optional<EditCommand>> parseEditLine(std::string_view line, const MaterialTable& materials);

/// Parses a whole script; lines end with LF (CRLF accepted). Stops at the first bad line: the error's message is
/// `LINE: message` with LINE 1-based. Materials are resolved against `materials` (normally World::materials()).
Result<EditScript> parseEditScript(std::string_view text, const MaterialTable& materials);

/// Applies `script` to `world` as one atomic batch (World::apply): on any error nothing changes and the message is
/// `LINE: message` naming the first offending edit's line (a batch over the world's voxel or chunk cap names the line
/// whose edit crosses it). Precondition: script.lines.size() == script.edits.size().
Result<EditResult> applyEditScript(World& world, const EditScript& script);

}  // namespace vtp::terrain
