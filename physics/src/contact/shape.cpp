// Validation of the engine-neutral shapes and poses (shape.h).
#include "vtp/physics/shape.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace vtp::physics {
namespace {

constexpr double kMinExtent = 1e-4;  // [Unit: world units]

bool positiveSize(double v) { return std::isfinite(v) && v > kMinExtent; }

Status bad(const std::string& what) { return Error{ErrorCode::kInvalidArgument, what, {}}; }

// Whether the points span a volume: some four of them form a tetrahedron of non-negligible volume.
bool spansVolume(std::span<const std::array<float, 3>> p) {
  auto sub = [](const std::array<float, 3>& a, const std::array<float, 3>& b) {
    return std::array<double, 3>{double(a[0]) - b[0], double(a[1]) - b[1], double(a[2]) - b[2]};
  };
  auto cross = [](const std::array<double, 3>& a, const std::array<double, 3>& b) {
    return std::array<double, 3>{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  };
  auto norm2 = [](const std::array<double, 3>& a) { return a[0] * a[0] + a[1] * a[1] + a[2] * a[2]; };
  // The farthest point from p[0], then the farthest from that line, then from that plane.
  std::size_t i1 = 0;
  for (std::size_t i = 1; i < p.size(); ++i)
    if (norm2(sub(p[i], p[0])) > norm2(sub(p[i1], p[0]))) i1 = i;
  const auto e1 = sub(p[i1], p[0]);
  if (norm2(e1) < kMinExtent * kMinExtent) return false;
  std::size_t i2 = 0;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (norm2(cross(e1, sub(p[i], p[0]))) > norm2(cross(e1, sub(p[i2], p[0])))) i2 = i;
  const auto n = cross(e1, sub(p[i2], p[0]));
  if (norm2(n) < kMinExtent * kMinExtent * norm2(e1)) return false;
  double best = 0;
  for (const auto& q : p) {
    const auto d = sub(q, p[0]);
    best = std::max(best, std::abs(n[0] * d[0] + n[1] * d[1] + n[2] * d[2]));
  }
  return best > kMinExtent * std::sqrt(norm2(n));
}

}  // namespace

Status validate(const ConvexShape& shape) {
  if (!std::isfinite(shape.margin) || shape.margin < 0) return bad("shape margin must be finite and >= 0");
  switch (shape.kind) {
    case ShapeKind::kSphere:
      if (!positiveSize(shape.radius)) return bad("sphere radius must be finite and > 1e-4");
      return {};
    case ShapeKind::kCapsule:
      if (!positiveSize(shape.radius)) return bad("capsule radius must be finite and > 1e-4");
      if (!std::isfinite(shape.half_height) || shape.half_height < 0)
        return bad("capsule half height must be finite and >= 0");
      return {};
    case ShapeKind::kBox:
    case ShapeKind::kCylinder: {
      const char* name = shape.kind == ShapeKind::kBox ? "box" : "cylinder";
      for (double h : shape.half_extents)
        if (!positiveSize(h)) return bad(std::string(name) + " half extents must be finite and > 1e-4");
      if (shape.margin > *std::min_element(shape.half_extents.begin(), shape.half_extents.end()))
        return bad(std::string(name) + " margin must not exceed its smallest half extent");
      return {};
    }
    case ShapeKind::kConvexHull: {
      if (shape.points.size() < 4 || shape.points.size() > kMaxHullPoints)
        return bad("a convex hull needs 4 to 256 points");
      for (const auto& q : shape.points)
        if (!std::isfinite(q[0]) || !std::isfinite(q[1]) || !std::isfinite(q[2]))
          return bad("convex hull points must be finite");
      if (!spansVolume(shape.points)) return bad("convex hull points must span a volume");
      return {};
    }
  }
  return bad("unknown shape kind");
}

Status validate(const Pose& pose) {
  for (double v : pose.position.array())
    if (!std::isfinite(v)) return bad("pose position must be finite");
  double len2 = 0;
  for (double v : pose.rotation) {
    if (!std::isfinite(v)) return bad("pose rotation must be finite");
    len2 += v * v;
  }
  if (std::abs(std::sqrt(len2) - 1.0) > 1e-3) return bad("pose rotation must be a unit quaternion");
  return {};
}

}  // namespace vtp::physics
