// The collider's accessors and the preparation of its queries (world units to the chunk's grid frame).
#include "vtp/physics/collider.h"

#include <cmath>
#include <limits>

namespace vtp::physics {

namespace {

// Physics answers within |x| < 2^16 voxels (CONVENTIONS), as MaskIndex::query does. [Unit: voxel]
constexpr double kLimit = 65536.0;

double chunkGridOrigin(std::int32_t chunk) { return double(chunk) * terrain::kChunkSize * kGridScale; }

// A chunk physics can answer for (its voxels within the limit, give or take one chunk).
bool chunkInRange(terrain::ChunkCoord c) {
  constexpr std::int64_t kChunks = std::int64_t(kLimit) / terrain::kChunkSize + 1;
  return std::abs(std::int64_t(c.x)) <= kChunks && std::abs(std::int64_t(c.y)) <= kChunks &&
         std::abs(std::int64_t(c.z)) <= kChunks;
}

}  // namespace

Collider::~Collider() = default;

GridBox Collider::bounds() const noexcept {
  return {{m_bounds[0], m_bounds[1], m_bounds[2]}, {m_bounds[3], m_bounds[4], m_bounds[5]}};
}

GridBox Collider::leafBounds(int leaf) const noexcept {
  const std::int16_t* g = boxes() + 6 * kLeafGroup * (leaf / kLeafGroup) + leaf % kLeafGroup;
  return {{g[0], g[kLeafGroup], g[2 * kLeafGroup]}, {g[3 * kLeafGroup], g[4 * kLeafGroup], g[5 * kLeafGroup]}};
}

std::array<int, 2> Collider::leafTriangles(int leaf) const noexcept {
  return {leafStart()[leaf], leafStart()[leaf + 1]};
}

ColliderTriangle Collider::triangle(int id) const noexcept {
  ColliderTriangle t;
  for (int k = 0; k < 3; ++k) {
    const std::uint16_t i = corner(k)[id];
    const std::int16_t* p = positions() + 3 * (i & 0x7FFF);
    t.vertices[std::size_t(k)] = {p[0], p[1], p[2], 0};
    t.edge_flags = std::uint8_t(t.edge_flags | ((i >> 15) << k));
  }
  t.material = materials()[id];
  return t;
}

Result<ChunkRay> prepareRay(const Ray& ray, terrain::ChunkCoord chunk, double voxel_size) {
  bool finite = std::isfinite(ray.max_t) && std::isfinite(voxel_size) && voxel_size > 0;
  bool nonzero = false, inside = true;
  for (int a = 0; a < 3; ++a) {
    const double o = ray.origin[std::size_t(a)], d = ray.direction[std::size_t(a)];
    finite = finite && std::isfinite(o) && std::isfinite(d);
    nonzero = nonzero || d != 0;
    const double end = o + ray.max_t * d;
    inside = inside && std::abs(o / voxel_size) < kLimit && std::abs(end / voxel_size) < kLimit;
  }
  if (!finite || !nonzero || !(ray.max_t >= 0)) {
    return Error{ErrorCode::kInvalidArgument, "prepareRay: the ray must be finite with a nonzero direction and max_t >= 0",
                 {}};
  }
  if (!inside || !chunkInRange(chunk)) {
    return Error{ErrorCode::kOutOfRange, "prepareRay: the ray must lie within 2^16 voxels of the origin", {}};
  }
  ChunkRay r;
  r.world = ray;
  r.voxel_size = voxel_size;
  r.max_t = float(ray.max_t);
  const double scale = kGridScale / voxel_size;
  const std::int32_t c[3] = {chunk.x, chunk.y, chunk.z};
  float abs_max = -1;
  for (int a = 0; a < 3; ++a) {
    // The origin in the grid frame of the world, then of the chunk: the second step subtracts a multiple of 2048
    // and is exact, so every chunk's (integer part + fraction) is the same point.
    const double local = ray.origin[std::size_t(a)] * scale - chunkGridOrigin(c[a]);
    const double whole = std::floor(local);
    r.origin_int[std::size_t(a)] = std::int32_t(whole);
    r.origin_frac[std::size_t(a)] = float(local - whole);
    const float d = float(ray.direction[std::size_t(a)] * scale);
    r.direction[std::size_t(a)] = d;
    r.inv_direction[std::size_t(a)] = d != 0 ? 1.0f / d : std::copysign(1e30f, d);
    if (std::abs(d) > abs_max) abs_max = std::abs(d), r.kz = a;
  }
  // Woop et al.: z along the dominant axis, x and y the next two cyclically.
  const float dz = r.direction[std::size_t(r.kz)];
  r.shear_x = r.direction[std::size_t((r.kz + 1) % 3)] / dz;
  r.shear_y = r.direction[std::size_t((r.kz + 2) % 3)] / dz;
  r.shear_z = 1.0f / dz;
  return r;
}

Result<GridBox> gridBoxOf(const std::array<double, 3>& min, const std::array<double, 3>& max, terrain::ChunkCoord chunk,
                          double voxel_size) {
  bool finite = std::isfinite(voxel_size) && voxel_size > 0, ordered = true, inside = true;
  for (int a = 0; a < 3; ++a) {
    const double lo = min[std::size_t(a)], hi = max[std::size_t(a)];
    finite = finite && std::isfinite(lo) && std::isfinite(hi);
    ordered = ordered && lo <= hi;
    inside = inside && std::abs(lo / voxel_size) < kLimit && std::abs(hi / voxel_size) < kLimit;
  }
  if (!finite || !ordered) {
    return Error{ErrorCode::kInvalidArgument, "gridBoxOf: box must be finite with min <= max", {}};
  }
  if (!inside || !chunkInRange(chunk)) return Error{ErrorCode::kOutOfRange, "gridBoxOf: box must lie within 2^16 voxels of the origin", {}};
  const double scale = kGridScale / voxel_size;
  const std::int32_t c[3] = {chunk.x, chunk.y, chunk.z};
  GridBox g;
  for (int a = 0; a < 3; ++a) {
    const double o = chunkGridOrigin(c[a]);
    g.min[std::size_t(a)] = std::int32_t(std::ceil(min[std::size_t(a)] * scale - o));
    g.max[std::size_t(a)] = std::int32_t(std::floor(max[std::size_t(a)] * scale - o));
  }
  return g;
}

}  // namespace vtp::physics
