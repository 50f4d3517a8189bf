#pragma once
/// \file
/// FNV-1a 64. Reports print hashes as 16 lowercase hex digits over the exact bytes hashed (tools/README.md).

#include <cstdint>
#include <span>
#include <string>

namespace vtp::terrain {

inline constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ull;

/// Continues an FNV-1a 64 hash over `bytes`.
constexpr std::uint64_t fnv1a64(std::span<const std::uint8_t> bytes, std::uint64_t h = kFnvOffset) {
  for (std::uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

/// 16 lowercase hex digits.
std::string hashToHex(std::uint64_t h);

class World;
/// Hash of a world's content: its encoded file bytes (voxel size, materials, every stored chunk).
std::uint64_t worldHash(const World& world);

}  // namespace vtp::terrain
