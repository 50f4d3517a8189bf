#pragma once
// The voxels and chunks a broadphase query covers: the query box grown by one voxel (the mesher's spill bound) and
// mapped to the voxels whose centres (v + 0.5) lie inside it, ceil(lo - 1.5) .. floor(hi + 0.5). One definition for
// the mask index and the pair tracker, so a body is re-evaluated after an edit exactly when its query could change.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "vtp/physics/mask_index.h"

namespace vtp::physics {

struct QueryRange {
  std::int64_t lo[3], hi[3];          // voxels, inclusive [Unit: voxel]
  terrain::ChunkCoord chunk_lo, chunk_hi;  // chunks, inclusive
  /// Chunks in the range, saturating at 2^53 (a box spanning storage has 2^66 of them).
  double chunkCount() const {
    return (double(chunk_hi.x) - chunk_lo.x + 1) * (double(chunk_hi.y) - chunk_lo.y + 1) *
           (double(chunk_hi.z) - chunk_lo.z + 1);
  }
  bool containsChunk(terrain::ChunkCoord c) const {
    return c.x >= chunk_lo.x && c.x <= chunk_hi.x && c.y >= chunk_lo.y && c.y <= chunk_hi.y && c.z >= chunk_lo.z &&
           c.z <= chunk_hi.z;
  }
};

/// Physics answers queries for |x| < 2^16 voxels (CONVENTIONS: single-precision contact maths loses a voxel's
/// precision beyond). [Unit: voxel]
inline constexpr double kQueryLimit = 65536.0;

/// Checks a query box: finite, min <= max on every axis, and within the query limit.
inline Status checkQueryBox(const Aabb& box, double voxel_size, const char* who) {
  const double c[6] = {box.min.x, box.min.y, box.min.z, box.max.x, box.max.y, box.max.z};
  if (!std::all_of(c, c + 6, [](double v) { return std::isfinite(v); }) || box.min.x > box.max.x ||
      box.min.y > box.max.y || box.min.z > box.max.z) {
    return Error{ErrorCode::kInvalidArgument, std::string(who) + ": box must be finite with min <= max", {}};
  }
  if (!std::all_of(c, c + 6, [&](double v) { return std::abs(v / voxel_size) < kQueryLimit; })) {
    return Error{ErrorCode::kOutOfRange, std::string(who) + ": box must lie within 2^16 voxels of the origin", {}};
  }
  return {};
}

/// The range of a checked box (checkQueryBox); nullopt when it covers no voxel centre. The clamp is a second guard:
/// the arithmetic cannot overflow whatever the box.
inline std::optional<QueryRange> queryRange(const Aabb& box, double voxel_size) {
  constexpr double kClamp = double(terrain::kStorageLimit) + 16.0;  // [Unit: voxel]
  const double lo[3] = {box.min.x, box.min.y, box.min.z}, hi[3] = {box.max.x, box.max.y, box.max.z};
  QueryRange r;
  for (int a = 0; a < 3; ++a) {
    r.lo[a] = std::int64_t(std::ceil(std::clamp(lo[a] / voxel_size, -kClamp, kClamp) - 1.5));
    r.hi[a] = std::int64_t(std::floor(std::clamp(hi[a] / voxel_size, -kClamp, kClamp) + 0.5));
    if (r.lo[a] > r.hi[a]) return std::nullopt;
  }
  auto chunkOf = [](std::int64_t v) {
    return std::int32_t(v >= 0 ? v / terrain::kChunkSize : -((-v + terrain::kChunkSize - 1) / terrain::kChunkSize));
  };
  r.chunk_lo = {chunkOf(r.lo[0]), chunkOf(r.lo[1]), chunkOf(r.lo[2])};
  r.chunk_hi = {chunkOf(r.hi[0]), chunkOf(r.hi[1]), chunkOf(r.hi[2])};
  return r;
}

}  // namespace vtp::physics
