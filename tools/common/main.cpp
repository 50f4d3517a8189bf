// Every tool's main(), compiled for baseline x86-64: it checks the CPU before any x86-64-v3 code runs
// (tools/README.md, determinism and builds), then hands over to the tool. Only C library calls and a catch here.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include "tool.h"
#include "vtp/terrain/cpu.h"

int main(int argc, char** argv) {
  if (!vtp::cpuSupported()) {
    std::fprintf(stderr, "%s: %s\n", kToolName, vtp::cpuRequirementMessage());
    return 1;
  }
  // The tools' last resort: an allocation the library does not own failing (a report, a mesh) ends in one line and
  // exit 1, not in std::terminate's abort.
  try {
    const int code = toolMain(argc, argv);
    // What went to stdout (a report, an ok line) must have arrived: a full disk is an error, not an exit 0. (A
    // tool that failed has said why already.)
    errno = 0;
    if (code == 0 && (std::fflush(stdout) != 0 || std::ferror(stdout))) {
      const int err = errno;  // 0 when the error was an earlier write's: then say only that
      std::fprintf(stderr, "%s: cannot write stdout%s%s\n", kToolName, err != 0 ? ": " : "",
                   err != 0 ? std::strerror(err) : "");
      return 1;
    }
    return code;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: out of memory\n", kToolName);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", kToolName, e.what());
  }
  return 1;
}
