#pragma once
// The double-precision oracle the profiler (and the collider tests) check ray and box queries against: Möller–Trumbore
// in double over every triangle of a collider, in world units. A ray the exact test cannot decide within rounding
// (it passes within 1e-6, in barycentric terms, of a triangle's edge) counts as both a possible hit and a possible
// miss, so a correct answer either way is accepted.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "vtp/physics/collider.h"

namespace vtp::oracle {

using P3 = std::array<double, 3>;

inline P3 sub(const P3& a, const P3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline P3 cross(const P3& a, const P3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
inline double dot(const P3& a, const P3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/// World position of the collider's chunk origin. [Unit: world]
inline P3 chunkOrigin(const physics::Collider& c, double voxel_size) {
  const terrain::ChunkCoord k = c.chunk();
  return {8.0 * k.x * voxel_size, 8.0 * k.y * voxel_size, 8.0 * k.z * voxel_size};
}

/// Triangle `id` in world units.
inline std::array<P3, 3> worldTriangle(const physics::Collider& c, int id, double voxel_size) {
  const physics::ColliderTriangle t = c.triangle(id);
  const double s = voxel_size / physics::kGridScale;
  const P3 o = chunkOrigin(c, voxel_size);
  std::array<P3, 3> v;
  for (std::size_t i = 0; i < 3; ++i) {
    v[i] = {o[0] + t.vertices[i].x * s, o[1] + t.vertices[i].y * s, o[2] + t.vertices[i].z * s};
  }
  return v;
}

/// Double-sided Möller–Trumbore; `slack` widens (> 0) or narrows (< 0) the triangle and the t range.
inline bool hit(const physics::Ray& r, const std::array<P3, 3>& v, double slack, double& t) {
  const P3 e1 = sub(v[1], v[0]), e2 = sub(v[2], v[0]);
  const P3 p = cross(r.direction.array(), e2);
  const double det = dot(e1, p);
  if (det == 0) return false;
  const P3 s = sub(r.origin.array(), v[0]);
  const double u = dot(s, p) / det;
  const P3 q = cross(s, e1);
  const double w = dot(r.direction.array(), q) / det;
  if (u < -slack || w < -slack || u + w > 1 + slack) return false;
  t = dot(e2, q) / det;
  const double tt = slack * r.max_t;
  return t >= -tt && t <= r.max_t + tt;
}

struct Verdict {
  bool sure_hit = false, maybe_hit = false;
  double t_lo = std::numeric_limits<double>::infinity();  ///< Closest t among possible hits.
  double t_hi = std::numeric_limits<double>::infinity();  ///< Closest t among sure hits.
  std::vector<int> sure, maybe;                           ///< Triangle ids, increasing.

  /// Whether a closest-hit answer (found, t, triangle) is right within |dt| <= 1e-5 of the segment.
  bool acceptsClosest(bool found, double t, int triangle, double max_t) const {
    if (!found) return !sure_hit;
    const double tol = 1e-5 * max_t;
    return maybe_hit && t >= t_lo - tol && t <= t_hi + tol && std::binary_search(maybe.begin(), maybe.end(), triangle);
  }
};

inline Verdict judge(const physics::Collider& c, const physics::Ray& r, double voxel_size) {
  constexpr double kSlack = 1e-6;
  Verdict o;
  for (int id = 0; id < c.triangleCount(); ++id) {
    const auto v = worldTriangle(c, id, voxel_size);
    double t;
    if (hit(r, v, kSlack, t)) {
      o.maybe_hit = true;
      o.maybe.push_back(id);
      o.t_lo = std::min(o.t_lo, t);
    }
    if (hit(r, v, -kSlack, t)) {
      o.sure_hit = true;
      o.sure.push_back(id);
      o.t_hi = std::min(o.t_hi, t);
    }
  }
  return o;
}

/// Ids of the triangles whose bounds overlap the closed world box [lo, hi], increasing.
inline std::vector<std::uint16_t> overlapping(const physics::Collider& c, const P3& lo, const P3& hi, double voxel_size) {
  std::vector<std::uint16_t> ids;
  for (int id = 0; id < c.triangleCount(); ++id) {
    const auto v = worldTriangle(c, id, voxel_size);
    bool overlap = true;
    for (std::size_t a = 0; a < 3; ++a) {
      overlap = overlap && std::min({v[0][a], v[1][a], v[2][a]}) <= hi[a] && std::max({v[0][a], v[1][a], v[2][a]}) >= lo[a];
    }
    if (overlap) ids.push_back(std::uint16_t(id));
  }
  return ids;
}

}  // namespace vtp::oracle
