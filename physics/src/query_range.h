#pragma once
// The voxels and chunks a broadphase query covers: the query box grown by one voxel (the mesher's spill bound) and
// mapped to the voxels whose centres (v + 0.5) lie inside it, ceil(lo - 1.5) .. floor(hi + 0.5). One definition for
// the mask index and the pair tracker, so a body is re-evaluated after an edit exactly when its query could change.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "vtp/physics/mask_index.h"

namespace vtp::physics {

struct QueryRange {
  std::int64_t lo[3] = {}, hi[3] = {};  // voxels, inclusive [Unit: voxel]
  bool empty = false;                   // no voxel centre inside
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

/// The range of a query box. Errors: a non-finite coordinate or min > max on an axis (kInvalidArgument), a
/// coordinate at or beyond 2^16 voxels from the origin (kOutOfRange); `who` names the caller in the message.
/// `empty` when the box covers no voxel centre. One division per coordinate, shared by the check and the range.
inline Result<QueryRange> queryRange(const Aabb& box, double voxel_size, const char* who) {
  const double lo[3] = {box.min.x, box.min.y, box.min.z}, hi[3] = {box.max.x, box.max.y, box.max.z};
  QueryRange r;
  bool finite = true, ordered = true, inside = true;
  double v_lo[3], v_hi[3];
  for (int a = 0; a < 3; ++a) {
    v_lo[a] = lo[a] / voxel_size;
    v_hi[a] = hi[a] / voxel_size;
    finite = finite && std::isfinite(v_lo[a]) && std::isfinite(v_hi[a]) && std::isfinite(lo[a]) && std::isfinite(hi[a]);
    ordered = ordered && lo[a] <= hi[a];
    inside = inside && std::abs(v_lo[a]) < kQueryLimit && std::abs(v_hi[a]) < kQueryLimit;
  }
  if (!finite || !ordered) {
    return Error{ErrorCode::kInvalidArgument, std::string(who) + ": box must be finite with min <= max", {}};
  }
  if (!inside) {
    return Error{ErrorCode::kOutOfRange, std::string(who) + ": box must lie within 2^16 voxels of the origin", {}};
  }
  auto chunkOf = [](std::int64_t v) {
    return std::int32_t(v >= 0 ? v / terrain::kChunkSize : -((-v + terrain::kChunkSize - 1) / terrain::kChunkSize));
  };
  for (int a = 0; a < 3; ++a) {
    r.lo[a] = std::int64_t(std::ceil(v_lo[a] - 1.5));
    r.hi[a] = std::int64_t(std::floor(v_hi[a] + 0.5));
    if (r.lo[a] > r.hi[a]) r.empty = true;
  }
  r.chunk_lo = {chunkOf(r.lo[0]), chunkOf(r.lo[1]), chunkOf(r.lo[2])};
  r.chunk_hi = {chunkOf(r.hi[0]), chunkOf(r.hi[1]), chunkOf(r.hi[2])};
  return r;
}

}  // namespace vtp::physics
