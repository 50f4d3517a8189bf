// Compiled for baseline x86-64 (see vtp_baseline_sources): it must run on CPUs the rest of the library cannot.
#include "vtp/terrain/cpu.h"

namespace vtp {

bool cpuSupported() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("f16c") &&
         __builtin_cpu_supports("lzcnt") && __builtin_cpu_supports("movbe");
}

const char* cpuRequirementMessage() noexcept {
  return "this CPU lacks x86-64-v3 instructions (AVX2, FMA, BMI2, F16C, LZCNT, MOVBE) that vtp is built for";
}

}  // namespace vtp
