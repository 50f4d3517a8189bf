#include "report.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include "build_info.h"

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
  const std::string text = report.dump(2) + "\n";
  std::FILE* out = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
  if (out == nullptr) return Error{ErrorCode::kIo, "cannot write " + path + ": " + std::strerror(errno), {}};
  // Every step checked, so a full disk (or stdout on /dev/full) is an error with its reason, not an exit 0.
  errno = 0;
  bool ok = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  ok = std::fflush(out) == 0 && ok;
  const int saved = errno;
  if (out != stdout) ok = std::fclose(out) == 0 && ok;
  if (!ok) {
    const std::string name = path == "-" ? "stdout" : path;
    return Error{ErrorCode::kIo, "cannot write " + name + ": " + std::strerror(saved != 0 ? saved : errno), {}};
  }
  return {};
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
