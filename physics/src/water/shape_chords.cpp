// The chords of each shape kind (shape_chords.h).
#include "water/shape_chords.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "water/hull_chords.h"
#include "cache/recently_used.h"
#include "vtp/terrain/assert.h"

namespace vtp::physics::water {
namespace {

using V3 = std::array<double, 3>;

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

// Samples along the polar angle of balls and across lying cylinders: the parameter along which a chord's end crosses a
// level surface, where the quadrature has its kink. Measured in flat water at depths >= 0.1 r: 16 gave errors up to
// 1.8% (spheres) and 2.8% (lying cylinders), 32 gives at most 0.5%.
constexpr int kCrossingSamples = 32;

// Lays chords in the world, in voxel units, from chords given in the shape's local frame (or, for a sphere, in world
// axes: its rotation changes nothing).
class ChordLayout {
 public:
  ChordLayout(const Pose& pose, double voxel_size, bool world_axes, Chords& out)
      : m_rotation(world_axes ? std::array<double, 4>{0, 0, 0, 1} : pose.rotation), m_position(pose.position.array()),
        m_inv(1.0 / voxel_size), m_out(out) {
    m_out.clear();
  }
  // Starts a run of `count` chords along the local unit vector `dir`, which add() lays, after the last run's.
  void run(const V3& dir, std::size_t count) {
    VTP_ASSERT(m_next == m_out.size(), "a chord run starts after the last run is complete");
    const V3 d = m_rotation.apply(dir);
    const std::size_t end = m_next + count;
    m_out.runs.push_back({VoxelSegment({}, {d[0] * m_inv, d[1] * m_inv, d[2] * m_inv}), m_next, end});
    m_out.resize(end);
    m_x = m_out.x.data(), m_y = m_out.y.data(), m_z = m_out.z.data();
    m_length = m_out.length.data(), m_weight = m_out.weight.data();
  }
  // Local axes a, b, c about a local origin, placed in the world in voxel units once, so that the chords of a grid
  // over them take a few products each (a rotation per chord was most of their laying).
  struct Basis {
    V3 origin, a, b, c;
  };
  Basis basis(const V3& origin, const V3& a, const V3& b, const V3& c) const {
    const V3 o = m_rotation.apply(origin), ra = m_rotation.apply(a), rb = m_rotation.apply(b), rc = m_rotation.apply(c);
    Basis f;
    for (std::size_t k = 0; k < 3; ++k) {
      f.origin[k] = (m_position[k] + o[k]) * m_inv;
      f.a[k] = ra[k] * m_inv, f.b[k] = rb[k] * m_inv, f.c[k] = rc[k] * m_inv;
    }
    return f;
  }
  // The run's next chord: from local point origin + p a + q b + r c of `f`, for `length`, standing for cross-section
  // area `weight`.
  [[gnu::always_inline]] void add(const Basis& f, double p, double q, double r, double length, double weight) {
    VTP_ASSERT(m_next < m_out.size(), "a chord is added within its run");
    const std::size_t i = m_next++;
    m_x[i] = f.origin[0] + p * f.a[0] + q * f.b[0] + r * f.c[0];
    m_y[i] = f.origin[1] + p * f.a[1] + q * f.b[1] + r * f.c[1];
    m_z[i] = f.origin[2] + p * f.a[2] + q * f.b[2] + r * f.c[2];
    m_length[i] = length;
    m_weight[i] = weight;
    m_measure += weight * length;
  }
  // World up in the local frame.
  V3 up() const { return {m_rotation.m[1][0], m_rotation.m[1][1], m_rotation.m[1][2]}; }
  // The volume the chords carry (sum of weight * length). [Unit: world units^3]
  double measure() const {
    VTP_ASSERT(m_next == m_out.size(), "the measure is taken with every run complete");
    return m_measure;
  }

 private:
  Rotation m_rotation;
  V3 m_position;
  double m_inv;
  Chords& m_out;
  std::size_t m_next = 0;  // the next chord's index
  double *m_x = nullptr, *m_y = nullptr, *m_z = nullptr, *m_length = nullptr, *m_weight = nullptr;  // m_out's
  double m_measure = 0;
};


// Chords integrate best when they are steep: the integrand (wet length) is then continuous across the water surface,
// with kinks only, whereas level chords are all wet or all dry (a step the quadrature cannot place). Each shape is
// laid along whichever of its parametrisations has chords within 45 degrees of vertical (a box's steepest axis).
constexpr double kSteep = 0.70710678118654752;

// sin and cos of first + (i + 0.5) * step for i < n. The chords of a world's shapes ask for a few such tables (the
// angles depend on a shape's size only through n), so each thread keeps the 16 it used last and lays chords without a
// sincos. A table stays valid until 16 others have been asked for since its last use (a ball holds two at once).
struct AngleKey {
  double first = 0, step = 0;
  int n = 0;
  bool operator==(const AngleKey&) const = default;
};
struct AngleTable {
  std::vector<double> sin, cos;
};
const AngleTable& angles(double first, double step, int n) {
  thread_local RecentlyUsed<AngleKey, AngleTable, 16> kept;
  return kept.get({first, step, n}, [](const AngleTable&) { return true; }, [&](AngleTable& t) {
    t.sin.resize(std::size_t(n));
    t.cos.resize(std::size_t(n));
    for (int i = 0; i < n; ++i) {
      const double angle = first + (i + 0.5) * step;
      t.sin[std::size_t(i)] = std::sin(angle), t.cos[std::size_t(i)] = std::cos(angle);
    }
  });
}

// Chords of a ball of radius r about `centre` along `w`, over the polar angles [theta0, theta0 + span) of the plane
// (u, v), each lengthened by `extra` at both ends (a capsule's cylinder). rho = r sin(phi) removes the square-root
// edge of the ball, so the midpoint rule converges.
void layBall(ChordLayout& layout, const V3& centre, double r, double extra, const V3& u, const V3& v, const V3& w,
             double theta0, double span, double voxel_size) {
  constexpr double kPi = std::numbers::pi;
  const int n_phi = samplesFor(2 * r, voxel_size, kCrossingSamples);
  const int n_theta = samplesFor(span / 2 * r, voxel_size, std::max(4, int(span / kPi * 4)));
  const double d_phi = 0.5 * kPi / n_phi, d_theta = span / n_theta;
  const AngleTable& phi = angles(0, d_phi, n_phi);
  const AngleTable& theta = angles(theta0, d_theta, n_theta);
  layout.run(w, std::size_t(n_phi) * std::size_t(n_theta));
  const ChordLayout::Basis f = layout.basis(centre, u, v, w);
  for (int i = 0; i < n_phi; ++i) {
    const double s = phi.sin[std::size_t(i)], c = phi.cos[std::size_t(i)];
    const double half = extra + r * c, weight = r * r * s * c * d_phi * d_theta;
    for (int j = 0; j < n_theta; ++j) {
      layout.add(f, r * s * theta.cos[std::size_t(j)], r * s * theta.sin[std::size_t(j)], -half, 2 * half, weight);
    }
  }
}

// Chords across a cylinder of radius r along the local Y axis, for y in [-hh, hh], along `w` (perpendicular to Y),
// over q = r sin(phi) along e = Y x w.
void layAcross(ChordLayout& layout, double r, double hh, const V3& w, double voxel_size) {
  constexpr double kPi = std::numbers::pi;
  const V3 e{w[2], 0, -w[0]};
  const int n_y = samplesFor(2 * hh, voxel_size, 8), n_phi = samplesFor(2 * r, voxel_size, kCrossingSamples);
  const double d_y = 2 * hh / n_y, d_phi = kPi / n_phi;
  const AngleTable& phi = angles(-0.5 * kPi, d_phi, n_phi);
  layout.run(w, std::size_t(n_y) * std::size_t(n_phi));
  const ChordLayout::Basis f = layout.basis({0, 0, 0}, {0, 1, 0}, e, w);
  for (int i = 0; i < n_y; ++i) {
    const double y = -hh + (i + 0.5) * d_y;
    for (int j = 0; j < n_phi; ++j) {
      const double half = r * phi.cos[std::size_t(j)];
      layout.add(f, y, r * phi.sin[std::size_t(j)], -half, 2 * half, d_y * half * d_phi);
    }
  }
}

// The local axis closest to vertical.
std::size_t steepestAxis(const V3& up) {
  const double x = std::abs(up[0]), y = std::abs(up[1]), z = std::abs(up[2]);
  return x > y ? (x > z ? 0 : 2) : (y > z ? 1 : 2);
}

// The unit vector perpendicular to local Y that is steepest in the world.
V3 levelSteepest(const V3& up) {
  const double n = std::hypot(up[0], up[2]);
  return n > 1e-12 ? V3{up[0] / n, 0, up[2] / n} : V3{1, 0, 0};
}

// Chords of a convex hull along its steepest local axis (hull_chords.h); returns the hull's volume, or an error when
// Bullet finds no solid hull.
Result<double> layHull(ChordLayout& layout, const ConvexShape& shape, double voxel_size) {
  const std::size_t k = steepestAxis(layout.up());
  const Result<HullChords> hull = hullChords(shape.points, k, voxel_size);
  if (!hull) return hull.error();
  V3 dir{};
  dir[k] = 1;
  layout.run(dir, hull->chords.size());
  const ChordLayout::Basis f = layout.basis({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1});
  for (const LocalChord& c : hull->chords) layout.add(f, c.start[0], c.start[1], c.start[2], c.length, c.weight);
  return hull->volume;
}

// Lays the chords of a valid shape; returns its analytic volume. [Unit: world units^3]
Result<double> layShape(ChordLayout& layout, const ConvexShape& shape, double voxel_size) {
  constexpr double kPi = std::numbers::pi;
  const V3 up = layout.up(), x{1, 0, 0}, y{0, 1, 0}, z{0, 0, 1};
  const bool upright = std::abs(up[1]) >= kSteep;
  switch (shape.kind) {
    case ShapeKind::kSphere: {  // world axes: chords vertical
      const double r = shape.radius;
      layBall(layout, {0, 0, 0}, r, 0, x, z, y, 0, 2 * kPi, voxel_size);
      return primitiveVolume(shape);
    }
    case ShapeKind::kCapsule: {
      const double r = shape.radius, hh = shape.half_height;
      if (upright) {
        layBall(layout, {0, 0, 0}, r, hh, x, z, y, 0, 2 * kPi, voxel_size);
      } else {
        // Lying: chords across the cylinder, and across each end's half ball (polar about Y in the plane (Y, e)).
        const V3 w = levelSteepest(up), e{w[2], 0, -w[0]};
        if (hh > 0) layAcross(layout, r, hh, w, voxel_size);
        layBall(layout, {0, hh, 0}, r, 0, y, e, w, -0.5 * kPi, kPi, voxel_size);
        layBall(layout, {0, -hh, 0}, r, 0, y, e, w, 0.5 * kPi, kPi, voxel_size);
      }
      return primitiveVolume(shape);
    }
    case ShapeKind::kCylinder: {
      const double r = shape.half_extents[0], hh = shape.half_extents[1];
      if (upright) {
        // Along the axis, equal-area rings: ring i at radius r sqrt((i + 1/2) / n).
        const int n_rho = samplesFor(2 * r, voxel_size, 12);
        const int n_theta = samplesFor(kPi * r, voxel_size, 16);
        const double weight = kPi * r * r / (n_rho * n_theta);
        const AngleTable& theta = angles(0, 2 * kPi / n_theta, n_theta);
        layout.run(y, std::size_t(n_rho) * std::size_t(n_theta));
        const ChordLayout::Basis f = layout.basis({0, 0, 0}, x, z, y);
        for (int i = 0; i < n_rho; ++i) {
          const double rho = r * std::sqrt((i + 0.5) / n_rho);
          for (int j = 0; j < n_theta; ++j) {
            layout.add(f, rho * theta.cos[std::size_t(j)], rho * theta.sin[std::size_t(j)], -hh, 2 * hh, weight);
          }
        }
      } else {
        layAcross(layout, r, hh, levelSteepest(up), voxel_size);
      }
      return primitiveVolume(shape);
    }
    case ShapeKind::kBox: {
      // Along the steepest axis k, a grid over the other two.
      const auto& h = shape.half_extents;
      const std::size_t k = steepestAxis(up);
      const std::size_t i_axis = (k + 1) % 3, j_axis = (k + 2) % 3;
      const int ni = samplesFor(2 * h[i_axis], voxel_size, 16), nj = samplesFor(2 * h[j_axis], voxel_size, 16);
      const double di = 2 * h[i_axis] / ni, dj = 2 * h[j_axis] / nj;
      V3 dir{}, a{}, b{};
      dir[k] = 1, a[i_axis] = 1, b[j_axis] = 1;
      layout.run(dir, std::size_t(ni) * std::size_t(nj));
      const ChordLayout::Basis f = layout.basis({0, 0, 0}, a, b, dir);
      for (int i = 0; i < ni; ++i) {
        for (int j = 0; j < nj; ++j) {
          layout.add(f, -h[i_axis] + (i + 0.5) * di, -h[j_axis] + (j + 0.5) * dj, -h[k], 2 * h[k], di * dj);
        }
      }
      return primitiveVolume(shape);
    }
    case ShapeKind::kConvexHull:
      return layHull(layout, shape, voxel_size);
  }
  return Error{ErrorCode::kInvalidArgument, "submerged: unknown shape kind", {}};
}

}  // namespace

Result<Volumes> layChords(const ConvexShape& shape, const Pose& pose, double voxel_size, Chords& out) {
  ChordLayout layout(pose, voxel_size, shape.kind == ShapeKind::kSphere, out);
  Result<double> volume = layShape(layout, shape, voxel_size);
  if (!volume) return volume.error();
  return Volumes{*volume, layout.measure()};
}

double primitiveVolume(const ConvexShape& shape) {
  constexpr double kPi = std::numbers::pi;
  const double r = shape.radius;
  const auto& h = shape.half_extents;
  switch (shape.kind) {
    case ShapeKind::kSphere: return 4.0 / 3.0 * kPi * r * r * r;
    case ShapeKind::kCapsule: return kPi * r * r * (2 * shape.half_height + 4.0 / 3.0 * r);
    case ShapeKind::kCylinder: return 2 * kPi * h[0] * h[0] * h[1];
    case ShapeKind::kBox: return 8 * h[0] * h[1] * h[2];
    case ShapeKind::kConvexHull: break;
  }
  return 0;
}

ShapeBounds shapeBounds(const ConvexShape& shape, const Pose& pose, double voxel_size) {
  const Rotation rotation(pose.rotation);
  const auto& m = rotation.m;
  V3 lo{}, hi{};
  if (shape.kind == ShapeKind::kConvexHull) {
    lo = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    for (const auto& q : shape.points) {
      const V3 p = rotation.apply({q[0], q[1], q[2]});
      for (std::size_t a = 0; a < 3; ++a) lo[a] = std::min(lo[a], p[a]), hi[a] = std::max(hi[a], p[a]);
    }
  } else {
    for (std::size_t a = 0; a < 3; ++a) {
      const double along = std::abs(m[a][1]);  // the local Y axis' share of world axis a
      double e = 0;
      switch (shape.kind) {
        case ShapeKind::kSphere: e = shape.radius; break;
        case ShapeKind::kCapsule: e = along * shape.half_height + shape.radius; break;
        case ShapeKind::kCylinder:
          e = along * shape.half_extents[1] + shape.half_extents[0] * std::sqrt(std::max(0.0, 1 - along * along));
          break;
        default:
          for (std::size_t j = 0; j < 3; ++j) e += std::abs(m[a][j]) * shape.half_extents[j];
          break;
      }
      lo[a] = -e, hi[a] = e;
    }
  }
  ShapeBounds b;
  for (std::size_t a = 0; a < 3; ++a) {
    b.lo[a] = (pose.position[a] + lo[a]) / voxel_size - 1e-6;
    b.hi[a] = (pose.position[a] + hi[a]) / voxel_size + 1e-6;
  }
  return b;
}

}  // namespace vtp::physics::water
