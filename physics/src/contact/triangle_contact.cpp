// Shape-triangle contacts: Bullet's GJK/EPA, and closed forms for spheres and capsules (Ericson, "Real-Time
// Collision Detection", 5.1.5 closest point on a triangle and 5.1.9 closest points of two segments).
#include "contact/triangle_contact.h"

#include <BulletCollision/CollisionShapes/btTriangleShape.h>
#include <BulletCollision/NarrowPhaseCollision/btGjkEpaPenetrationDepthSolver.h>
#include <BulletCollision/NarrowPhaseCollision/btGjkPairDetector.h>
#include <BulletCollision/NarrowPhaseCollision/btVoronoiSimplexSolver.h>

#include <algorithm>

namespace vtp::physics {
namespace {

// Below this the closed forms hand over to GJK/EPA: the direction between the closest points is undefined.
constexpr btScalar kDegenerate = btScalar(1e-6);

struct GjkResult final : btDiscreteCollisionDetectorInterface::Result {
  bool found = false;
  TriangleContact contact;
  void setShapeIdentifiersA(int, int) override {}
  void setShapeIdentifiersB(int, int) override {}
  void addContactPoint(const btVector3& normal_on_b, const btVector3& point_on_b, btScalar depth) override {
    found = true;
    contact = {normal_on_b, point_on_b, depth};
  }
};

// A point or vector in double precision, with the operations the closest-point routines below use (btVector3's),
// for the box's closest features: the difference of two closest points a tiny gap apart keeps its direction.
struct D3 {
  double x = 0, y = 0, z = 0;
  D3() = default;
  D3(double a, double b, double c) : x(a), y(b), z(c) {}
  explicit D3(const btVector3& v) : x(v.x()), y(v.y()), z(v.z()) {}
  D3 operator+(const D3& o) const { return {x + o.x, y + o.y, z + o.z}; }
  D3 operator-(const D3& o) const { return {x - o.x, y - o.y, z - o.z}; }
  D3 operator*(double s) const { return {x * s, y * s, z * s}; }
  double dot(const D3& o) const { return x * o.x + y * o.y + z * o.z; }
  double length2() const { return dot(*this); }
  D3 cross(const D3& o) const { return {y * o.z - z * o.y, z * o.x - x * o.z, x * o.y - y * o.x}; }
  btVector3 toBullet() const { return {btScalar(x), btScalar(y), btScalar(z)}; }
};

// Closest points of segments p1q1 and p2q2: s and t along each. V is btVector3 or D3.
template <class V>
void closestSegmentSegment(const V& p1, const V& q1, const V& p2, const V& q2, V& c1, V& c2) {
  using S = decltype(p1.dot(q1));
  const S zero = 0, one = 1, degenerate = S(kDegenerate);
  const V d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  const S a = d1.dot(d1), e = d2.dot(d2), f = d2.dot(r);
  S s = 0, t = 0;
  if (a <= degenerate && e <= degenerate) {
    s = t = 0;
  } else if (a <= degenerate) {
    t = std::clamp(f / e, zero, one);
  } else {
    const S c = d1.dot(r);
    if (e <= degenerate) {
      s = std::clamp(-c / a, zero, one);
    } else {
      const S b = d1.dot(d2), denom = a * e - b * b;
      s = denom > 0 ? std::clamp((b * f - c * e) / denom, zero, one) : 0;
      t = (b * s + f) / e;
      if (t < 0) {
        t = 0;
        s = std::clamp(-c / a, zero, one);
      } else if (t > 1) {
        t = 1;
        s = std::clamp((b - c) / a, zero, one);
      }
    }
  }
  c1 = p1 + d1 * s;
  c2 = p2 + d2 * t;
}

// The point of triangle t closest to p (Ericson 5.1.5). V is btVector3 or D3.
template <class V>
V closestOnTriangle(const V& p, const V t[3]) {
  const V &a = t[0], &b = t[1], &c = t[2];
  const V ab = b - a, ac = c - a, ap = p - a;
  const auto d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0 && d2 <= 0) return a;
  const V bp = p - b;
  const auto d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0 && d4 <= d3) return b;
  const auto vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) return a + ab * (d1 / (d1 - d3));
  const V cp = p - c;
  const auto d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0 && d5 <= d6) return c;
  const auto vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) return a + ac * (d2 / (d2 - d6));
  const auto va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
  const auto denom = 1 / (va + vb + vc);
  return a + ab * (vb * denom) + ac * (vc * denom);
}

// The contact of a sphere of `radius` around core point `q` whose closest triangle point is `p`; false when the
// direction is undefined (q on the triangle).
bool pointContact(const btVector3& q, const btVector3& p, btScalar radius, btScalar threshold, bool& degenerate,
                  TriangleContact& out) {
  const btVector3 d = q - p;
  const btScalar len = d.length();
  degenerate = len < kDegenerate;
  if (degenerate || len - radius >= threshold) return false;
  out = {d / len, p, len - radius};
  return true;
}

bool sphereContact(const ShapeInChunk& s, const btVector3 t[3], btScalar threshold, TriangleContact& out,
                   unsigned long long& gjk_calls) {
  const btVector3 c = s.pose.getOrigin();
  bool degenerate = false;
  if (pointContact(c, closestPointOnTriangle(c, t), s.radius, threshold, degenerate, out)) return true;
  return degenerate && gjkTriangleContact(s, t, threshold, out, gjk_calls);
}

bool capsuleContact(const ShapeInChunk& s, const btVector3 t[3], btScalar threshold, TriangleContact& out,
                    unsigned long long& gjk_calls) {
  // A core segment through the triangle has no closest pair: EPA decides.
  const btVector3 n = (t[1] - t[0]).cross(t[2] - t[0]);
  const btScalar da = (s.a - t[0]).dot(n), db = (s.b - t[0]).dot(n);
  if ((da <= 0 && db >= 0) || (da >= 0 && db <= 0)) {
    if (da == db) return gjkTriangleContact(s, t, threshold, out, gjk_calls);
    const btVector3 x = s.a + (s.b - s.a) * (da / (da - db));
    if ((closestPointOnTriangle(x, t) - x).length2() < kDegenerate * kDegenerate)
      return gjkTriangleContact(s, t, threshold, out, gjk_calls);
  }
  btVector3 best_q = s.a, best_p = closestPointOnTriangle(s.a, t);
  btScalar best = (best_q - best_p).length2();
  auto consider = [&](const btVector3& q, const btVector3& p) {
    const btScalar d = (q - p).length2();
    if (d < best) best = d, best_q = q, best_p = p;
  };
  consider(s.b, closestPointOnTriangle(s.b, t));
  for (int k = 0; k < 3; ++k) {
    btVector3 q, p;
    closestSegmentSegment(s.a, s.b, t[k], t[(k + 1) % 3], q, p);
    consider(q, p);
  }
  bool degenerate = false;
  if (pointContact(best_q, best_p, s.radius, threshold, degenerate, out)) return true;
  return degenerate && gjkTriangleContact(s, t, threshold, out, gjk_calls);
}

// A box (core half extents e = half extents with margin - margin, rounded by the margin: Bullet's btBoxShape) against
// a triangle. The separating axis test over the 13 candidate axes (3 box faces, the triangle's normal, 9 edge-edge
// cross products) decides overlap; an overlapping core's least overlap among them is EPA's penetration depth (the
// faces of a box-triangle Minkowski difference have exactly those normals). A separated core's distance comes from its
// closest features: triangle corners against the box, box edges against the triangle (every closest pair of a box and
// a triangle apart involves one of those).
bool boxContact(const ShapeInChunk& s, const btVector3 t[3], btScalar threshold, TriangleContact& out,
                unsigned long long& gjk_calls) {
  const btMatrix3x3& basis = s.pose.getBasis();
  const btVector3 centre = s.pose.getOrigin();
  const btScalar margin = s.radius;
  const btVector3& e = s.core_half;
  const btVector3 axis[3] = {basis.getColumn(0), basis.getColumn(1), basis.getColumn(2)};
  const btVector3 v[3] = {t[0] - centre, t[1] - centre, t[2] - centre};
  const btVector3 f[3] = {v[1] - v[0], v[2] - v[1], v[0] - v[2]};
  btScalar best_gap = -BT_LARGE_FLOAT, least = BT_LARGE_FLOAT;
  btVector3 least_normal(0, 0, 0), gap_normal(0, 0, 0);
  int gap_axis = -1;
  // Candidate axis k (unnormalised); false when it separates the shapes by the margin plus the threshold or more.
  auto overlapsOn = [&](int k, const btVector3& candidate) {
    const btScalar len2 = candidate.length2();
    if (len2 < btScalar(1e-12)) return true;  // parallel edges: no axis
    const btVector3 l = candidate / std::sqrt(len2);
    const btScalar r = e[0] * std::abs(axis[0].dot(l)) + e[1] * std::abs(axis[1].dot(l)) + e[2] * std::abs(axis[2].dot(l));
    const btScalar p0 = v[0].dot(l), p1 = v[1].dot(l), p2 = v[2].dot(l);
    const btScalar lo = std::min({p0, p1, p2}), hi = std::max({p0, p1, p2});
    const btScalar gap = std::max(lo - r, -hi - r);
    if (gap >= margin + threshold) return false;
    if (gap > best_gap) {
      // The normal from the triangle to the box: -l when the triangle lies beyond the box along l.
      best_gap = gap, gap_axis = k < 4 ? k : 4, gap_normal = lo - r >= -hi - r ? -l : l;
    }
    // Moving the box along +l by hi + r, or along -l by r - lo, separates the cores.
    if (hi + r < least) least = hi + r, least_normal = l;
    if (r - lo < least) least = r - lo, least_normal = -l;
    return true;
  };
  // In this order: the box's faces (most far triangles stop at the first), the triangle's normal, then the 9 edge
  // pairs, whose cross products are only formed when the cheaper axes did not separate.
  for (int i = 0; i < 3; ++i)
    if (!overlapsOn(i, axis[i])) return false;
  if (!overlapsOn(3, f[0].cross(f[1]))) return false;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (!overlapsOn(4 + 3 * i + j, axis[i].cross(f[j]))) return false;
  if (best_gap <= 0) {
    // Overlapping cores: EPA's answer, the least overlap. The terrain point: the core's deepest corner along the
    // normal, moved out by the overlap.
    const btVector3 nb(least_normal.dot(axis[0]), least_normal.dot(axis[1]), least_normal.dot(axis[2]));
    const btVector3 corner_local(nb[0] > 0 ? -e[0] : e[0], nb[1] > 0 ? -e[1] : e[1], nb[2] > 0 ? -e[2] : e[2]);
    const btVector3 corner = centre + basis * corner_local;
    out = {least_normal, corner + least_normal * least, -(least + margin)};
    return out.distance < threshold;
  }
  // Separated cores: the closest features, in double precision in the box's centre frame (the triangle, the centre
  // and the box's frame are floats, so this starts exact): at a tiny gap, the direction between the closest points
  // would otherwise be mostly rounding. Along the most separating axis, when the witnesses face each other (the
  // core's nearest corner over the triangle, or the triangle's nearest corner over the box's face), that separation
  // is the distance and the axis the normal.
  const D3 dc(centre), da[3] = {D3(axis[0]), D3(axis[1]), D3(axis[2])};
  const D3 dv[3] = {D3(t[0]) - dc, D3(t[1]) - dc, D3(t[2]) - dc};
  auto boxPoint = [&](double x, double y, double z) { return da[0] * x + da[1] * y + da[2] * z; };
  D3 dcorners[8];
  for (int c = 0; c < 8; ++c) dcorners[c] = boxPoint(c & 1 ? e[0] : -e[0], c & 2 ? e[1] : -e[1], c & 4 ? e[2] : -e[2]);
  // The contact between box point q and triangle point p (relative to the centre); GJK/EPA decides when they meet.
  auto contactOf = [&](const D3& q, const D3& p) {
    const double len = std::sqrt((q - p).length2());
    if (len < kDegenerate) return gjkTriangleContact(s, t, threshold, out, gjk_calls);
    if (len - margin >= threshold) return false;
    out = {((q - p) * (1 / len)).toBullet(), centre + p.toBullet(), btScalar(len - margin)};
    return true;
  };
  if (gap_axis == 3) {
    D3 m = (dv[1] - dv[0]).cross(dv[2] - dv[1]);
    m = m * ((m.dot(D3(gap_normal)) > 0 ? 1 : -1) / std::sqrt(m.length2()));
    const D3& corner = dcorners[(da[0].dot(m) > 0 ? 0 : 1) | (da[1].dot(m) > 0 ? 0 : 2) | (da[2].dot(m) > 0 ? 0 : 4)];
    const D3 foot = corner - m * (corner - dv[0]).dot(m);
    const bool over = (closestOnTriangle(foot, dv) - foot).length2() <= 1e-20;  // on the triangle, within 1e-10
    if (over) return contactOf(corner, foot);
  } else if (gap_axis >= 0 && gap_axis < 3) {
    const D3 m(gap_normal);  // a box face normal, pointing from the triangle to the box
    int nearest = 0;
    for (int k = 1; k < 3; ++k)
      if (dv[k].dot(m) > dv[nearest].dot(m)) nearest = k;
    const int u = (gap_axis + 1) % 3, w = (gap_axis + 2) % 3;
    if (std::abs(dv[nearest].dot(da[u])) <= e[u] && std::abs(dv[nearest].dot(da[w])) <= e[w]) {
      return contactOf(dv[nearest] + m * -(e[gap_axis] + dv[nearest].dot(m)), dv[nearest]);
    }
  }
  // Otherwise the closest features, searched.
  D3 best_q, best_p = dv[0];
  double best = HUGE_VAL;
  auto consider = [&](const D3& q, const D3& p) {
    const double d = (q - p).length2();
    if (d < best) best = d, best_q = q, best_p = p;
  };
  for (int k = 0; k < 3; ++k) {
    // The box point closest to corner k: clamp in the box's frame.
    consider(boxPoint(std::clamp(dv[k].dot(da[0]), -double(e[0]), double(e[0])),
                      std::clamp(dv[k].dot(da[1]), -double(e[1]), double(e[1])),
                      std::clamp(dv[k].dot(da[2]), -double(e[2]), double(e[2]))),
             dv[k]);
  }
  for (const D3& c : dcorners) consider(c, closestOnTriangle(c, dv));
  for (int c = 0; c < 8; ++c) {
    for (int a = 0; a < 3; ++a) {
      if (c & (1 << a)) continue;  // each edge once, from its lower corner
      for (int k = 0; k < 3; ++k) {
        D3 on_box, on_triangle;
        closestSegmentSegment(dcorners[c], dcorners[c | (1 << a)], dv[k], dv[(k + 1) % 3], on_box, on_triangle);
        consider(on_box, on_triangle);
      }
    }
  }
  return contactOf(best_q, best_p);
}

}  // namespace

btVector3 closestPointOnTriangle(const btVector3& p, const btVector3 t[3]) { return closestOnTriangle(p, t); }

int boxFacePoints(const ShapeInChunk& s, const btVector3 t[3], const btVector3& n, btScalar threshold,
                  TriangleContact out[kMaxFacePoints]) {
  // The face whose outward normal points most against n.
  const btMatrix3x3& basis = s.pose.getBasis();
  int axis = 0;
  btScalar best = 0;
  for (int a = 0; a < 3; ++a) {
    const btScalar c = basis.getColumn(a).dot(n);
    if (std::abs(c) > std::abs(best)) best = c, axis = a;
  }
  if (std::abs(best) < btScalar(0.99)) return 0;
  const btScalar side = best > 0 ? -1 : 1;  // the face at -axis when the axis points along n
  const int u = (axis + 1) % 3, v = (axis + 2) % 3;
  const btVector3 centre = s.pose.getOrigin() + basis.getColumn(axis) * (side * (s.core_half[axis] + s.radius));
  // The flat part of the face: the core's face pushed out by the margin.
  const btVector3 du = basis.getColumn(u) * s.core_half[u], dv = basis.getColumn(v) * s.core_half[v];
  btVector3 poly[2][kMaxFacePoints];
  int count = 4;
  poly[0][0] = centre - du - dv, poly[0][1] = centre + du - dv, poly[0][2] = centre + du + dv;
  poly[0][3] = centre - du + dv;
  // Sutherland-Hodgman against the three planes through the triangle's edges, parallel to n.
  int cur = 0;
  for (int k = 0; k < 3 && count > 0; ++k) {
    const btVector3 edge = t[(k + 1) % 3] - t[k];
    btVector3 inward = n.cross(edge);
    if (inward.dot(t[(k + 2) % 3] - t[k]) < 0) inward = -inward;
    const btVector3* in = poly[cur];
    btVector3* next = poly[1 - cur];
    int kept = 0;
    for (int i = 0; i < count; ++i) {
      const btVector3 &p = in[i], &q = in[(i + 1) % count];
      const btScalar dp = (p - t[k]).dot(inward), dq = (q - t[k]).dot(inward);
      if (dp >= 0 && kept < kMaxFacePoints) next[kept++] = p;
      if (((dp >= 0) != (dq >= 0)) && kept < kMaxFacePoints) next[kept++] = p + (q - p) * (dp / (dp - dq));
    }
    count = kept;
    cur = 1 - cur;
  }
  int written = 0;
  for (int i = 0; i < count; ++i) {
    const btVector3& p = poly[cur][i];
    const btScalar d = (p - t[0]).dot(n);
    if (d < threshold) out[written++] = {n, p - n * d, d};
  }
  return written;
}

bool gjkTriangleContact(const ShapeInChunk& shape, const btVector3 triangle[3], btScalar threshold,
                        TriangleContact& out, unsigned long long& gjk_calls) {
  ++gjk_calls;
  btTriangleShape tri(triangle[0], triangle[1], triangle[2]);
  tri.setMargin(0);
  btVoronoiSimplexSolver simplex;
  btGjkEpaPenetrationDepthSolver epa;
  btGjkPairDetector gjk(shape.shape, &tri, &simplex, &epa);
  btGjkPairDetector::ClosestPointInput input;
  input.m_transformA = shape.pose;
  input.m_transformB.setIdentity();
  const btScalar reach = shape.shape->getMargin() + threshold;
  input.m_maximumDistanceSquared = reach * reach;
  GjkResult result;
  gjk.getClosestPoints(input, result, nullptr);
  if (!result.found || !(result.contact.distance < threshold)) return false;
  out = result.contact;
  return true;
}

bool coreSeparated(const ShapeInChunk& s, const btVector3 t[3], btScalar reach) {
  const btVector3 n = (t[1] - t[0]).cross(t[2] - t[0]);
  if (n.length2() < btScalar(1e-12)) return false;  // a sliver: no axes to trust
  // The triangle's normal, its edge normals in its plane, and the way from the shape's origin to the triangle's
  // nearest point (which separates a shape beside a corner or an edge, where the others do not).
  const btVector3 origin = s.pose.getOrigin();
  btVector3 axes[5] = {n, n.cross(t[1] - t[0]), n.cross(t[2] - t[1]), n.cross(t[0] - t[2]),
                       closestPointOnTriangle(origin, t) - origin};
  const btMatrix3x3& basis = s.pose.getBasis();
  for (btVector3& l : axes) {
    const btScalar len2 = l.length2();
    if (len2 < btScalar(1e-12)) continue;
    l /= std::sqrt(len2);
    const btScalar p0 = t[0].dot(l), p1 = t[1].dot(l), p2 = t[2].dot(l);
    const btScalar lo = std::min({p0, p1, p2}), hi = std::max({p0, p1, p2});
    btScalar core_lo, core_hi;
    if (s.core_points != nullptr) {
      core_lo = BT_LARGE_FLOAT, core_hi = -BT_LARGE_FLOAT;
      for (int k = 0; k < s.core_point_count; ++k) {
        const btScalar d = s.core_points[k].dot(l);
        core_lo = std::min(core_lo, d), core_hi = std::max(core_hi, d);
      }
    } else {
      const btVector3 local = l * basis;  // basis^T l
      core_hi = (s.pose * s.shape->localGetSupportingVertexWithoutMargin(local)).dot(l);
      core_lo = (s.pose * s.shape->localGetSupportingVertexWithoutMargin(-local)).dot(l);
    }
    if (core_lo - hi >= reach || lo - core_hi >= reach) return true;
  }
  return false;
}

bool triangleContact(const ShapeInChunk& shape, const btVector3 triangle[3], btScalar threshold, TriangleContact& out,
                     unsigned long long& gjk_calls) {
  switch (shape.special) {
    case Special::kSphere:
      return sphereContact(shape, triangle, threshold, out, gjk_calls);
    case Special::kCapsule:
      return capsuleContact(shape, triangle, threshold, out, gjk_calls);
    case Special::kBox:
      return boxContact(shape, triangle, threshold, out, gjk_calls);
    case Special::kNone:
      break;
  }
  if (coreSeparated(shape, triangle, shape.shape->getMargin() + threshold)) return false;
  return gjkTriangleContact(shape, triangle, threshold, out, gjk_calls);
}

}  // namespace vtp::physics
