// Compiled for baseline x86-64 (see vtp_baseline_sources): it must run on CPUs the rest of the library cannot.
// Reads CPUID directly (Intel SDM vol. 2A, "CPUID"), which gcc and clang both support, and checks that the OS saves
// the YMM registers (XGETBV), without which AVX instructions fault even on a CPU that has them.
#include "vtp/terrain/cpu.h"

#include <cpuid.h>

namespace vtp {
namespace {

bool bit(unsigned value, int n) { return (value >> n) & 1u; }

}  // namespace

bool cpuSupported() noexcept {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool fma = bit(ecx, 12), movbe = bit(ecx, 22), osxsave = bit(ecx, 27), avx = bit(ecx, 28), f16c = bit(ecx, 29);
  if (!(fma && movbe && osxsave && avx && f16c)) return false;
  // XCR0 bits 1 (SSE state) and 2 (AVX state) must both be enabled by the OS.
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & 6u) != 6u) return false;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool bmi1 = bit(ebx, 3), avx2 = bit(ebx, 5), bmi2 = bit(ebx, 8);
  if (!(bmi1 && avx2 && bmi2)) return false;
  if (!__get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx)) return false;
  const bool lzcnt = bit(ecx, 5);
  return lzcnt;
}

const char* cpuRequirementMessage() noexcept {
  return "this CPU lacks x86-64-v3 instructions (AVX2, FMA, BMI2, F16C, LZCNT, MOVBE) that vtp is built for";
}

}  // namespace vtp
