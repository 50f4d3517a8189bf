// Every tool's main(), compiled for baseline x86-64: it checks the CPU before any x86-64-v3 code runs
// (CONVENTIONS "Determinism and builds"), then hands over to the tool. Only C library calls here.
#include <cstdio>

#include "tool.h"
#include "vtp/terrain/cpu.h"

int main(int argc, char** argv) {
  if (!vtp::cpuSupported()) {
    std::fprintf(stderr, "%s: %s\n", kToolName, vtp::cpuRequirementMessage());
    return 1;
  }
  return toolMain(argc, argv);
}
