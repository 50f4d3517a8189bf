#include "shape_coverage.h"

#include <algorithm>
#include <cmath>

namespace vtp::terrain {
namespace {

struct Overloaded {
  double operator()(const BoxShape& b, Vec3d c) const {
    return std::min({c.x - b.min.x, b.max.x - c.x, c.y - b.min.y, b.max.y - c.y, c.z - b.min.z, b.max.z - c.z});
  }
  double operator()(const SphereShape& s, Vec3d c) const {
    const double dx = c.x - s.center.x, dy = c.y - s.center.y, dz = c.z - s.center.z;
    return s.radius - std::sqrt(dx * dx + dy * dy + dz * dz);
  }
  double operator()(const CylinderShape& s, Vec3d c) const {
    const double dx = c.x - s.center.x, dz = c.z - s.center.z;
    const double radial = s.radius - std::sqrt(dx * dx + dz * dz);
    const double axial = 0.5 * s.height - std::abs(c.y - s.center.y);
    return std::min(radial, axial);
  }
};

// [lo, hi) as voxel indices when both ends lie inside storage.
std::optional<std::pair<std::int32_t, std::int32_t>> voxelRange(double lo, double hi) {
  const double flo = std::floor(lo), fhi = std::ceil(hi);
  if (!(flo > -double(kStorageLimit)) || !(fhi <= double(kStorageLimit))) return std::nullopt;
  return std::pair{std::int32_t(flo), std::int32_t(fhi)};
}

}  // namespace

double insideDepth(const Shape& shape, VoxelCoord v) {
  const Vec3d centre{v.x + 0.5, v.y + 0.5, v.z + 0.5};
  return std::visit([&](const auto& s) { return Overloaded{}(s, centre); }, shape);
}

std::optional<VoxelBox> touchedBox(const Shape& shape) {
  Vec3d lo, hi;
  if (const auto* b = std::get_if<BoxShape>(&shape)) {
    lo = b->min;
    hi = b->max;
  } else if (const auto* s = std::get_if<SphereShape>(&shape)) {
    // cov > 0 needs the centre closer than r + 0.5, i.e. voxel [i, i+1) within r of the centre on each axis.
    lo = {s->center.x - s->radius, s->center.y - s->radius, s->center.z - s->radius};
    hi = {s->center.x + s->radius, s->center.y + s->radius, s->center.z + s->radius};
  } else {
    const auto& c = std::get<CylinderShape>(shape);
    lo = {c.center.x - c.radius, c.center.y - 0.5 * c.height, c.center.z - c.radius};
    hi = {c.center.x + c.radius, c.center.y + 0.5 * c.height, c.center.z + c.radius};
  }
  // A voxel [i, i+1) can have cov > 0 only if its centre is within 0.5 of [lo, hi], i.e. it overlaps (lo, hi).
  auto x = voxelRange(lo.x, hi.x), y = voxelRange(lo.y, hi.y), z = voxelRange(lo.z, hi.z);
  if (!x || !y || !z) return std::nullopt;
  return VoxelBox{{x->first, y->first, z->first}, {x->second, y->second, z->second}};
}

}  // namespace vtp::terrain
