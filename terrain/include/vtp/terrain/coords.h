#pragma once
/// \file
/// Typed coordinates. A voxel, a chunk and a world-space point are different types so they cannot be mixed up.
/// Voxels and units (terrain/README.md): voxel i covers [i, i+1) on each axis; chunk c holds voxels 8c .. 8c+7 (floor
/// division, so voxel -1 lies in chunk -1).

#include <cstdint>
#include <compare>

namespace vtp::terrain {

/// Voxels along each axis of a chunk.
inline constexpr int kChunkSize = 8;
/// Voxels in a chunk.
inline constexpr int kChunkVolume = kChunkSize * kChunkSize * kChunkSize;
/// Storage accepts voxel coordinates with |v| < kStorageLimit on every axis. [Unit: voxel]
inline constexpr std::int32_t kStorageLimit = 1 << 24;
/// Chunk coordinates of stored voxels lie in [kMinChunk, kMaxChunk].
inline constexpr std::int32_t kMinChunk = -(kStorageLimit / kChunkSize);
inline constexpr std::int32_t kMaxChunk = (kStorageLimit - 1) / kChunkSize;

/// Integer position of one voxel. [Unit: voxel]
struct VoxelCoord {
  std::int32_t x = 0, y = 0, z = 0;
  friend constexpr bool operator==(const VoxelCoord&, const VoxelCoord&) = default;
};

/// Integer position of one chunk: chunk c holds voxels [8c, 8c+8). [Unit: chunk]
struct ChunkCoord {
  std::int32_t x = 0, y = 0, z = 0;
  friend constexpr bool operator==(const ChunkCoord&, const ChunkCoord&) = default;
  /// Orders by z, then y, then x: the order chunks are written to world files.
  friend constexpr std::strong_ordering operator<=>(const ChunkCoord& a, const ChunkCoord& b) {
    if (auto c = a.z <=> b.z; c != 0) return c;
    if (auto c = a.y <=> b.y; c != 0) return c;
    return a.x <=> b.x;
  }
};

/// Hash of a chunk key for hash tables, separable by axis so a caller resolving a block of neighbours can share the
/// per-axis parts: chunkHash(c) = chunkHashMix(chunkHashPart<0>(x) ^ chunkHashPart<1>(y) ^ chunkHashPart<2>(z)).
/// The finaliser spreads neighbouring keys, which linear probing needs.
template <int kAxis>
constexpr std::uint64_t chunkHashPart(std::int32_t v) {
  constexpr std::uint64_t kMul[3] = {0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull};
  return std::uint64_t(std::uint32_t(v)) * kMul[kAxis];
}
constexpr std::uint64_t chunkHashMix(std::uint64_t h) {
  h = (h ^ (h >> 32)) * 0xD6E8FEB86659FD93ull;
  return h ^ (h >> 32);
}
constexpr std::uint64_t chunkHash(ChunkCoord c) {
  return chunkHashMix(chunkHashPart<0>(c.x) ^ chunkHashPart<1>(c.y) ^ chunkHashPart<2>(c.z));
}

/// A point or vector in voxel units (edit shapes take these). [Unit: voxel]
struct Vec3d {
  double x = 0, y = 0, z = 0;
  friend constexpr bool operator==(const Vec3d&, const Vec3d&) = default;
};

/// Half-open box of voxels: min inclusive, max exclusive. Empty when any max <= min. [Unit: voxel]
struct VoxelBox {
  VoxelCoord min, max;
  friend constexpr bool operator==(const VoxelBox&, const VoxelBox&) = default;
  constexpr bool empty() const { return max.x <= min.x || max.y <= min.y || max.z <= min.z; }
  /// Number of voxels inside; 0 when empty; saturates at INT64_MAX (a box spanning all of int32 overflows otherwise).
  constexpr std::int64_t volume() const {
    if (empty()) return 0;
    const std::int64_t dx = std::int64_t(max.x) - min.x, dy = std::int64_t(max.y) - min.y;
    const std::int64_t dz = std::int64_t(max.z) - min.z;
    constexpr std::int64_t kMax = 0x7fffffffffffffffll;
    if (dx > kMax / dy) return kMax;
    const std::int64_t xy = dx * dy;
    return xy > kMax / dz ? kMax : xy * dz;
  }
  constexpr bool contains(VoxelCoord v) const {
    return v.x >= min.x && v.x < max.x && v.y >= min.y && v.y < max.y && v.z >= min.z && v.z < max.z;
  }
};

/// Floor division by 8 for any int32 (voxel -1 is in chunk -1).
constexpr std::int32_t floorDivChunk(std::int32_t v) { return v >> 3; }  // arithmetic shift floors for negatives

/// The chunk holding voxel v.
constexpr ChunkCoord chunkOf(VoxelCoord v) { return {floorDivChunk(v.x), floorDivChunk(v.y), floorDivChunk(v.z)}; }

/// First voxel of chunk c.
constexpr VoxelCoord chunkOrigin(ChunkCoord c) { return {c.x * kChunkSize, c.y * kChunkSize, c.z * kChunkSize}; }

/// The voxels of chunk c as a box.
constexpr VoxelBox chunkBox(ChunkCoord c) {
  const VoxelCoord o = chunkOrigin(c);
  return {o, {o.x + kChunkSize, o.y + kChunkSize, o.z + kChunkSize}};
}

/// Number of chunks the box overlaps; 0 when empty. Saturates at INT64_MAX as VoxelBox::volume does.
constexpr std::int64_t chunkCount(const VoxelBox& b) {
  if (b.empty()) return 0;
  auto span = [](std::int32_t lo, std::int32_t hi) {
    return std::int64_t(floorDivChunk(hi - 1)) - floorDivChunk(lo) + 1;
  };
  const std::int64_t x = span(b.min.x, b.max.x), y = span(b.min.y, b.max.y), z = span(b.min.z, b.max.z);
  constexpr std::int64_t kMax = 0x7fffffffffffffffll;
  return x * y > kMax / z ? kMax : x * y * z;  // each span is below 2^30, so x * y cannot overflow
}

/// Box b grown by `by` voxels on every side (shrunk for a negative `by`). chunkBox(c) grown by the mesher's apron is
/// the box the mesher reads for chunk c. The caller keeps the result within int32.
constexpr VoxelBox grown(const VoxelBox& b, std::int32_t by) {
  return {{b.min.x - by, b.min.y - by, b.min.z - by}, {b.max.x + by, b.max.y + by, b.max.z + by}};
}

/// Intersection of two boxes (may be empty).
constexpr VoxelBox intersect(const VoxelBox& a, const VoxelBox& b) {
  auto mx = [](std::int32_t p, std::int32_t q) { return p > q ? p : q; };
  auto mn = [](std::int32_t p, std::int32_t q) { return p < q ? p : q; };
  return {{mx(a.min.x, b.min.x), mx(a.min.y, b.min.y), mx(a.min.z, b.min.z)},
          {mn(a.max.x, b.max.x), mn(a.max.y, b.max.y), mn(a.max.z, b.max.z)}};
}

/// Smallest box holding both; an empty operand is ignored.
constexpr VoxelBox unite(const VoxelBox& a, const VoxelBox& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  auto mx = [](std::int32_t p, std::int32_t q) { return p > q ? p : q; };
  auto mn = [](std::int32_t p, std::int32_t q) { return p < q ? p : q; };
  return {{mn(a.min.x, b.min.x), mn(a.min.y, b.min.y), mn(a.min.z, b.min.z)},
          {mx(a.max.x, b.max.x), mx(a.max.y, b.max.y), mx(a.max.z, b.max.z)}};
}

/// True when every voxel of the (non-empty) box is storable: |v| < kStorageLimit.
constexpr bool insideStorage(const VoxelBox& b) {
  return b.min.x > -kStorageLimit && b.min.y > -kStorageLimit && b.min.z > -kStorageLimit &&
         b.max.x <= kStorageLimit && b.max.y <= kStorageLimit && b.max.z <= kStorageLimit;
}

/// True when |v| < kStorageLimit on every axis.
constexpr bool insideStorage(VoxelCoord v) {
  return v.x > -kStorageLimit && v.x < kStorageLimit && v.y > -kStorageLimit && v.y < kStorageLimit &&
         v.z > -kStorageLimit && v.z < kStorageLimit;
}

}  // namespace vtp::terrain
