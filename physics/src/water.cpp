// Submerged volume and centre of buoyancy (water.h). The shape is cut into parallel chords over a quadrature of its
// cross-section; each chord is walked through the water voxels of the chunks the mask index reports with water, and
// the lengths it spends in water (water_voxels.h) are exact, so the only approximation is the 2D quadrature, whose
// integrand is continuous with kinks where a chord's end crosses the water surface (error O(h^2) per sample spacing
// h). Integrating along the body's own axis keeps the domain exact (no partially covered samples at a box's sides).
#include "vtp/physics/water.h"

#include <LinearMath/btConvexHullComputer.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "water_voxels.h"

namespace vtp::physics {

using terrain::ChunkCoord;
using terrain::Voxel;

namespace {

using V3 = std::array<double, 3>;

// One chord: the segment a + s d, s in [0, 1], and the cross-section area it stands for; weight * |d| is the volume
// it carries. [Unit: voxel for a and d, world units^2 for weight]
struct Chord {
  water::VoxelSegment segment;
  double weight;
};

// The rotation matrix of a (nearly) unit quaternion x, y, z, w, normalised first.
struct Rotation {
  double m[3][3];
  explicit Rotation(const std::array<double, 4>& q) {
    const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    const double x = q[0] / n, y = q[1] / n, z = q[2] / n, w = q[3] / n;
    m[0][0] = 1 - 2 * (y * y + z * z), m[0][1] = 2 * (x * y - z * w), m[0][2] = 2 * (x * z + y * w);
    m[1][0] = 2 * (x * y + z * w), m[1][1] = 1 - 2 * (x * x + z * z), m[1][2] = 2 * (y * z - x * w);
    m[2][0] = 2 * (x * z - y * w), m[2][1] = 2 * (y * z + x * w), m[2][2] = 1 - 2 * (x * x + y * y);
  }
  V3 apply(const V3& v) const {
    return {m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2], m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
            m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2]};
  }
};

// Samples along an axis: at least `base`, at least 2 per voxel of `extent` (so uneven water is resolved on big
// bodies), at most 128.
int samplesFor(double extent, double voxel_size, int base) {
  return std::clamp(int(std::ceil(2.0 * extent / voxel_size)), base, 128);
}

// Lays chords in the world, in voxel units. Each chord is given by its local start (u, lo, v) and length along local Y.
class ChordLayout {
 public:
  ChordLayout(const Pose& pose, double voxel_size, bool world_axis, std::vector<Chord>& out)
      : m_rotation(pose.rotation), m_position(pose.position), m_inv(1.0 / voxel_size), m_world_axis(world_axis),
        m_out(out) {
    m_out.clear();
  }
  void add(double u, double lo, double v, double length, double weight) {
    const V3 local{u, lo, v};
    const V3 p = m_world_axis ? local : m_rotation.apply(local);
    const V3 d = m_world_axis ? V3{0, length, 0}
                              : V3{m_rotation.m[0][1] * length, m_rotation.m[1][1] * length,
                                   m_rotation.m[2][1] * length};
    Chord c;
    for (std::size_t a = 0; a < 3; ++a) {
      c.segment.a[a] = (m_position[a] + p[a]) * m_inv;
      c.segment.d[a] = d[a] * m_inv;
    }
    c.weight = weight;
    m_measure += weight * length;
    m_out.push_back(c);
  }
  // The volume the chords carry (sum of weight * length). [Unit: world units^3]
  double measure() const { return m_measure; }

 private:
  Rotation m_rotation;
  V3 m_position;
  double m_inv;
  bool m_world_axis;
  std::vector<Chord>& m_out;
  double m_measure = 0;
};

// Chords of a body of revolution about local Y with half length half(cos_phi) at radius r sin(phi): the substitution
// rho = r sin(phi) removes the square-root edge of spheres and capsules, so the midpoint rule converges.
template <class Half>
void layPolar(ChordLayout& layout, double r, Half&& half, double voxel_size) {
  constexpr double kPi = std::numbers::pi;
  const int n_phi = samplesFor(2 * r, voxel_size, 16), n_theta = std::min(256, samplesFor(kPi * r, voxel_size, 12));
  const double d_phi = 0.5 * kPi / n_phi, d_theta = 2 * kPi / n_theta;
  for (int i = 0; i < n_phi; ++i) {
    const double phi = (i + 0.5) * d_phi, s = std::sin(phi), c = std::cos(phi);
    const double h = half(c), weight = r * r * s * c * d_phi * d_theta;
    for (int j = 0; j < n_theta; ++j) {
      const double theta = (j + 0.5) * d_theta;
      layout.add(r * s * std::cos(theta), -h, r * s * std::sin(theta), 2 * h, weight);
    }
  }
}

// Chords of a convex hull along local Y over a grid covering its xz bounds, cut by its faces' planes; returns the
// hull's volume (divergence theorem over its faces), or an error when Bullet finds no solid hull.
Result<double> layHull(ChordLayout& layout, const ConvexShape& shape, double voxel_size) {
  thread_local btConvexHullComputer hull;
  hull.compute(shape.points.data()->data(), int(sizeof(shape.points[0])), int(shape.points.size()), 0, 0);
  if (hull.faces.size() < 4) return Error{ErrorCode::kInvalidArgument, "submerged: convex hull has no volume", {}};
  struct Plane {
    V3 n;
    double d;
  };
  thread_local std::vector<Plane> planes;
  planes.clear();
  V3 lo{HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi{-HUGE_VAL, -HUGE_VAL, -HUGE_VAL}, centroid{};
  for (int i = 0; i < hull.vertices.size(); ++i) {
    for (int a = 0; a < 3; ++a) {
      const double x = hull.vertices[i][a];
      lo[std::size_t(a)] = std::min(lo[std::size_t(a)], x);
      hi[std::size_t(a)] = std::max(hi[std::size_t(a)], x);
      centroid[std::size_t(a)] += x / hull.vertices.size();
    }
  }
  double volume = 0;
  for (int f = 0; f < hull.faces.size(); ++f) {
    const btConvexHullComputer::Edge* first = &hull.edges[hull.faces[f]];
    const btConvexHullComputer::Edge* e = first;
    // Newell's normal, a fan of tetrahedra from the centroid for the volume.
    V3 n{}, p0{};
    bool have_p0 = false;
    do {
      const btVector3& p = hull.vertices[e->getSourceVertex()];
      const btVector3& q = hull.vertices[e->getTargetVertex()];
      const V3 a{p[0] - centroid[0], p[1] - centroid[1], p[2] - centroid[2]};
      const V3 b{q[0] - centroid[0], q[1] - centroid[1], q[2] - centroid[2]};
      n[0] += (a[1] - b[1]) * (a[2] + b[2]);
      n[1] += (a[2] - b[2]) * (a[0] + b[0]);
      n[2] += (a[0] - b[0]) * (a[1] + b[1]);
      if (!have_p0) p0 = a, have_p0 = true;
      volume += std::abs(p0[0] * (a[1] * b[2] - a[2] * b[1]) + p0[1] * (a[2] * b[0] - a[0] * b[2]) +
                         p0[2] * (a[0] * b[1] - a[1] * b[0])) /
                6.0;
      e = e->getNextEdgeOfFace();
    } while (e != first);
    const double len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (len == 0) continue;
    for (double& x : n) x /= len;
    double d = n[0] * p0[0] + n[1] * p0[1] + n[2] * p0[2];
    if (d < 0) n = {-n[0], -n[1], -n[2]}, d = -d;  // outward: the centroid is inside
    planes.push_back({n, d + n[0] * centroid[0] + n[1] * centroid[1] + n[2] * centroid[2]});
  }
  const int nx = samplesFor(hi[0] - lo[0], voxel_size, 16), nz = samplesFor(hi[2] - lo[2], voxel_size, 16);
  const double dx = (hi[0] - lo[0]) / nx, dz = (hi[2] - lo[2]) / nz;
  for (int i = 0; i < nx; ++i) {
    const double u = lo[0] + (i + 0.5) * dx;
    for (int j = 0; j < nz; ++j) {
      const double v = lo[2] + (j + 0.5) * dz;
      double y0 = lo[1], y1 = hi[1];
      for (const Plane& p : planes) {
        const double rhs = p.d - p.n[0] * u - p.n[2] * v;
        if (p.n[1] > 1e-12) y1 = std::min(y1, rhs / p.n[1]);
        else if (p.n[1] < -1e-12) y0 = std::max(y0, rhs / p.n[1]);
        else if (rhs < 0) y1 = y0;
      }
      if (y1 > y0) layout.add(u, y0, v, y1 - y0, dx * dz);
    }
  }
  return volume;
}

// Lays the chords of a valid shape; returns its analytic volume. [Unit: world units^3]
Result<double> layShape(ChordLayout& layout, const ConvexShape& shape, double voxel_size) {
  constexpr double kPi = std::numbers::pi;
  switch (shape.kind) {
    case ShapeKind::kSphere: {
      const double r = shape.radius;
      layPolar(layout, r, [r](double c) { return r * c; }, voxel_size);
      return 4.0 / 3.0 * kPi * r * r * r;
    }
    case ShapeKind::kCapsule: {
      const double r = shape.radius, hh = shape.half_height;
      layPolar(layout, r, [r, hh](double c) { return hh + r * c; }, voxel_size);
      return kPi * r * r * (2 * hh + 4.0 / 3.0 * r);
    }
    case ShapeKind::kCylinder: {
      // Equal-area rings: ring i at radius r sqrt((i + 1/2) / n).
      const double r = shape.half_extents[0], hh = shape.half_extents[1];
      const int n_rho = samplesFor(2 * r, voxel_size, 12), n_theta = std::min(256, samplesFor(kPi * r, voxel_size, 16));
      const double weight = kPi * r * r / (n_rho * n_theta);
      for (int i = 0; i < n_rho; ++i) {
        const double rho = r * std::sqrt((i + 0.5) / n_rho);
        for (int j = 0; j < n_theta; ++j) {
          const double theta = (j + 0.5) * 2 * kPi / n_theta;
          layout.add(rho * std::cos(theta), -hh, rho * std::sin(theta), 2 * hh, weight);
        }
      }
      return 2 * kPi * r * r * hh;
    }
    case ShapeKind::kBox: {
      const auto& h = shape.half_extents;
      const int nx = samplesFor(2 * h[0], voxel_size, 16), nz = samplesFor(2 * h[2], voxel_size, 16);
      const double dx = 2 * h[0] / nx, dz = 2 * h[2] / nz;
      for (int i = 0; i < nx; ++i)
        for (int j = 0; j < nz; ++j) layout.add(-h[0] + (i + 0.5) * dx, -h[1], -h[2] + (j + 0.5) * dz, 2 * h[1], dx * dz);
      return 8 * h[0] * h[1] * h[2];
    }
    case ShapeKind::kConvexHull:
      return layHull(layout, shape, voxel_size);
  }
  return Error{ErrorCode::kInvalidArgument, "submerged: unknown shape kind", {}};
}

// The shape's analytic volume and the volume its chords carry. [Unit: world units^3]
struct Volumes {
  double shape = 0, chords = 0;
};

// Lays the chords of a valid shape into `out`.
Result<Volumes> layChords(const ConvexShape& shape, const Pose& pose, double voxel_size, std::vector<Chord>& out) {
  ChordLayout layout(pose, voxel_size, shape.kind == ShapeKind::kSphere, out);
  Result<double> volume = layShape(layout, shape, voxel_size);
  if (!volume) return volume.error();
  return Volumes{*volume, layout.measure()};
}

// The bounds of the chords (they lie inside the shape). [Unit: world units]
Aabb boundsOf(const std::vector<Chord>& chords, double voxel_size) {
  V3 lo{HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi{-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  for (const Chord& c : chords) {
    for (std::size_t a = 0; a < 3; ++a) {
      const double p = c.segment.a[a], q = p + c.segment.d[a];
      lo[a] = std::min(lo[a], std::min(p, q));
      hi[a] = std::max(hi[a], std::max(p, q));
    }
  }
  return {{lo[0] * voxel_size, lo[1] * voxel_size, lo[2] * voxel_size},
          {hi[0] * voxel_size, hi[1] * voxel_size, hi[2] * voxel_size}};
}

}  // namespace

Result<Submersion> submerged(const TerrainPhysics& physics, const ConvexShape& shape, const Pose& pose) {
  if (Status s = validate(shape); !s) return Error{s.error().code, "submerged: " + s.error().message, {}};
  if (Status s = validate(pose); !s) return Error{s.error().code, "submerged: " + s.error().message, {}};
  const double voxel_size = physics.voxelSize();
  thread_local std::vector<Chord> chords;
  thread_local std::vector<ChunkTouch> touches;
  thread_local std::vector<Voxel> voxels(water::kChunkVoxels);
  Result<Volumes> volumes = layChords(shape, pose, voxel_size, chords);
  if (!volumes) return volumes.error();
  if (chords.empty()) return Error{ErrorCode::kInvalidArgument, "submerged: shape has no volume", {}};
  if (Status s = physics.masks().query(boundsOf(chords, voxel_size), touches); !s)
    return Error{s.error().code, "submerged: " + s.error().message, {}};

  // Per chord, the wet part's measure and first moment in s: sums of (s1 - s0) and (s1^2 - s0^2) / 2.
  double wet = 0;
  V3 moment{};
  for (const ChunkTouch& touch : touches) {
    if (!touch.water) continue;
    if (Status s = physics.world().readBox(terrain::chunkBox(touch.chunk), voxels); !s)
      return Error{s.error().code, "submerged: " + s.error().message, {}};
    if (std::none_of(voxels.begin(), voxels.end(), [](Voxel v) { return terrain::isWater(v); })) continue;
    for (const Chord& c : chords) {
      double t0 = 0, t1 = 1;
      if (!water::clipToChunk(c.segment, touch.chunk, t0, t1)) continue;
      double s0 = 0, s1 = 0;
      water::walkWet(c.segment, touch.chunk, voxels.data(), t0, t1,
                     [&](double w0, double w1, int, int, int, water::WetStart, int) {
                       s0 += w1 - w0;
                       s1 += 0.5 * (w1 * w1 - w0 * w0);
                       return true;
                     });
      if (s0 == 0) continue;
      const double length = std::sqrt(c.segment.d[0] * c.segment.d[0] + c.segment.d[1] * c.segment.d[1] +
                                      c.segment.d[2] * c.segment.d[2]) * voxel_size;
      const double mass = c.weight * length;  // world units^3 per unit of s
      wet += mass * s0;
      for (std::size_t a = 0; a < 3; ++a) moment[a] += mass * (c.segment.a[a] * s0 + c.segment.d[a] * s1);
    }
  }
  Submersion out;
  out.shape_volume = volumes->shape;
  out.centre = pose.position;
  if (wet > 0) {
    // Scale the wet measure by the analytic volume: a body wholly in full water gets exactly its volume.
    out.volume = std::min(volumes->shape, volumes->shape * wet / volumes->chords);
    for (std::size_t a = 0; a < 3; ++a) out.centre[a] = moment[a] / wet * voxel_size;
  }
  return out;
}

}  // namespace vtp::physics
