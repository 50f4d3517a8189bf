#pragma once
// JSON report helpers shared by the tools (tools/README.md): the machine and build sections every report
// carries, and writing a report to a path or stdout.

#include <nlohmann/json.hpp>

#include <string>

#include "vtp/terrain/status.h"

namespace vtp::tools {

/// {"cpu": "<model name>", "cores": N}
nlohmann::json machineInfo();
/// {"compiler": "...", "flags": "...", "type": "Release"}
nlohmann::json buildInfo();
/// `text` as a JSON string value: unchanged when it is valid UTF-8, else with every non-ASCII byte replaced by '?'
/// (nlohmann::json refuses to dump invalid UTF-8, and paths and file-derived messages may hold any bytes). Every
/// path or message a report carries goes through it.
std::string jsonText(const std::string& text);
/// Writes `report` (pretty-printed) to `path` as writeOutputFile does (stdout for "-", a file replaced atomically).
Status writeJson(const nlohmann::json& report, const std::string& path);

}  // namespace vtp::tools
