#include "vtp/terrain/chunk.h"

#include <algorithm>
#include <cstring>

#include "vtp/terrain/assert.h"

namespace vtp::terrain {

namespace {

// A dense chunk keeps its voxels in the same allocation as its header: a reader follows one pointer, not two
// (readBox touches up to 27 chunks per call, so the saved cache miss per chunk matters).
class DenseChunk final : public Chunk {
 public:
  DenseChunk(std::uint64_t version, std::span<const Voxel, kChunkVolume> voxels)
      : Chunk(version, kAir, m_voxels) {
    std::memcpy(m_voxels, voxels.data(), sizeof(m_voxels));
  }

 private:
  Voxel m_voxels[kChunkVolume];
};

class UniformChunk final : public Chunk {
 public:
  UniformChunk(std::uint64_t version, Voxel value) : Chunk(version, value, nullptr) {}
};

}  // namespace

Chunk::~Chunk() = default;

std::unique_ptr<const Chunk> Chunk::make(std::uint64_t version, std::span<const Voxel, kChunkVolume> voxels) {
  VTP_ASSERT(std::all_of(voxels.begin(), voxels.end(), isCanonical), "a chunk is made of canonical voxels");
  const Voxel first = voxels[0];
  if (std::all_of(voxels.begin() + 1, voxels.end(), [&](Voxel v) { return v == first; })) {
    return makeUniform(version, first);
  }
  return std::make_unique<DenseChunk>(version, voxels);
}

std::unique_ptr<const Chunk> Chunk::makeUniform(std::uint64_t version, Voxel value) {
  VTP_ASSERT(isCanonical(value), "a uniform chunk's voxel is canonical");
  return std::make_unique<UniformChunk>(version, value);
}

void Chunk::copyTo(std::span<Voxel, kChunkVolume> out) const noexcept {
  if (m_dense) {
    std::memcpy(out.data(), m_dense, sizeof(Voxel) * kChunkVolume);
  } else {
    std::fill(out.begin(), out.end(), m_uniform);
  }
}

std::size_t Chunk::memoryBytes() const noexcept {
  return m_dense ? sizeof(DenseChunk) : sizeof(UniformChunk);
}

}  // namespace vtp::terrain
