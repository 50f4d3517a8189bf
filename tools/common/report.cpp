#include "report.h"

#include <fstream>
#include <thread>

#include "build_info.h"
#include "output_file.h"

namespace vtp::tools {

nlohmann::json machineInfo() {
  std::string cpu = "unknown";
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      if (auto colon = line.find(':'); colon != std::string::npos) cpu = line.substr(colon + 2);
      break;
    }
  }
  return {{"cpu", cpu}, {"cores", std::thread::hardware_concurrency()}};
}

nlohmann::json buildInfo() {
  return {{"compiler", VTP_BUILD_COMPILER}, {"flags", VTP_BUILD_FLAGS}, {"type", VTP_BUILD_TYPE}};
}

Status writeJson(const nlohmann::json& report, const std::string& path) {
  return writeOutputFile(report.dump(2) + "\n", path);
}

std::string jsonText(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();
    return text;
  } catch (const nlohmann::json::exception&) {
    std::string out = text;
    for (char& ch : out) {
      if (static_cast<unsigned char>(ch) >= 0x80) ch = '?';
    }
    return out;
  }
}

}  // namespace vtp::tools
