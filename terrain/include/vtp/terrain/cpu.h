#pragma once
/// \file
/// The start-up CPU check. The library is built for x86-64-v3; this file's implementation is compiled for baseline
/// x86-64 so it can run, and fail cleanly, on any x86-64 CPU.

namespace vtp {

/// True when the CPU has every instruction set the build targets (AVX, AVX2, FMA, BMI1, BMI2, F16C, LZCNT, MOVBE).
/// Thread-safe, no side effects.
bool cpuSupported() noexcept;

/// A one-line message for tools to print when cpuSupported() is false (static storage).
const char* cpuRequirementMessage() noexcept;

}  // namespace vtp
