#include "vtp/terrain/chunk.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace vtp::terrain {

Chunk::Chunk(std::uint64_t version, Voxel uniform, std::unique_ptr<Voxel[]> dense)
    : m_version(version), m_uniform(uniform), m_dense(std::move(dense)) {}

Chunk::~Chunk() = default;

std::unique_ptr<const Chunk> Chunk::make(std::uint64_t version, std::span<const Voxel, kChunkVolume> voxels) {
  assert(std::all_of(voxels.begin(), voxels.end(), isCanonical));
  const Voxel first = voxels[0];
  if (std::all_of(voxels.begin() + 1, voxels.end(), [&](Voxel v) { return v == first; })) {
    return makeUniform(version, first);
  }
  std::unique_ptr<Voxel[]> dense(new Voxel[kChunkVolume]);
  std::memcpy(dense.get(), voxels.data(), sizeof(Voxel) * kChunkVolume);
  return std::unique_ptr<const Chunk>(new Chunk(version, kAir, std::move(dense)));
}

std::unique_ptr<const Chunk> Chunk::makeUniform(std::uint64_t version, Voxel value) {
  assert(isCanonical(value));
  return std::unique_ptr<const Chunk>(new Chunk(version, value, nullptr));
}

void Chunk::copyTo(std::span<Voxel, kChunkVolume> out) const noexcept {
  if (m_dense) {
    std::memcpy(out.data(), m_dense.get(), sizeof(Voxel) * kChunkVolume);
  } else {
    std::fill(out.begin(), out.end(), m_uniform);
  }
}

std::size_t Chunk::memoryBytes() const noexcept {
  return sizeof(Chunk) + (m_dense ? sizeof(Voxel) * kChunkVolume : 0);
}

}  // namespace vtp::terrain
