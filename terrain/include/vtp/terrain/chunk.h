#pragma once
/// \file
/// An immutable 8^3 block of voxels. Edits never modify a Chunk: they build a new one and the World publishes it, so
/// a reader holding a Chunk pointer (under a World::ReadGuard) always sees one consistent version.

#include <cstdint>
#include <memory>
#include <span>

#include "vtp/terrain/coords.h"
#include "vtp/terrain/voxel.h"

namespace vtp::terrain {

/// Index of local voxel (x, y, z), each 0..7, in a chunk's dense array: x fastest, then y, then z.
constexpr int chunkIndex(int x, int y, int z) { return x + kChunkSize * (y + kChunkSize * z); }

/// One version of a chunk: either uniform (all 512 voxels equal, one value, no array) or dense (512 voxels).
/// The uniform representation is chosen automatically by make(), so two chunks with equal voxels have equal form.
/// Thread-safety: immutable after construction; any number of threads may read it.
class Chunk {
 public:
  /// Builds a chunk from 512 canonical voxels in chunkIndex order, compacting to uniform when all are equal.
  /// Precondition (asserted in debug builds): every voxel is canonical.
  static std::unique_ptr<const Chunk> make(std::uint64_t version, std::span<const Voxel, kChunkVolume> voxels);
  /// Builds a uniform chunk.
  static std::unique_ptr<const Chunk> makeUniform(std::uint64_t version, Voxel value);

  /// Edit counter of this chunk: starts at 1 when the chunk is first stored and grows by one per changing edit.
  std::uint64_t version() const noexcept { return m_version; }
  bool isUniform() const noexcept { return m_dense == nullptr; }
  /// The value of every voxel. Precondition: isUniform().
  Voxel uniformValue() const noexcept { return m_uniform; }
  /// The 512 voxels in chunkIndex order. Precondition: !isUniform().
  std::span<const Voxel, kChunkVolume> dense() const noexcept {
    return std::span<const Voxel, kChunkVolume>(m_dense, kChunkVolume);
  }
  /// Voxel at local (x, y, z), each 0..7.
  Voxel at(int x, int y, int z) const noexcept { return m_dense ? m_dense[chunkIndex(x, y, z)] : m_uniform; }
  /// Writes all 512 voxels to `out` in chunkIndex order.
  void copyTo(std::span<Voxel, kChunkVolume> out) const noexcept;
  /// Heap bytes this version holds, the object included. [Unit: byte]
  std::size_t memoryBytes() const noexcept;

  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;
  virtual ~Chunk();

 protected:
  Chunk(std::uint64_t version, Voxel uniform, const Voxel* dense) : m_version(version), m_uniform(uniform), m_dense(dense) {}

 private:
  std::uint64_t m_version;
  Voxel m_uniform;
  const Voxel* m_dense;  // null when uniform; otherwise the voxels stored in the same allocation (chunk.cpp)
};

}  // namespace vtp::terrain
