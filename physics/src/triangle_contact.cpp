// Shape-triangle contacts: Bullet's GJK/EPA, and closed forms for spheres and capsules (Ericson, "Real-Time
// Collision Detection", 5.1.5 closest point on a triangle and 5.1.9 closest points of two segments).
#include "triangle_contact.h"

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

// Closest points of segments p1q1 and p2q2: s and t along each.
void closestSegmentSegment(const btVector3& p1, const btVector3& q1, const btVector3& p2, const btVector3& q2,
                           btVector3& c1, btVector3& c2) {
  const btVector3 d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  const btScalar a = d1.dot(d1), e = d2.dot(d2), f = d2.dot(r);
  btScalar s = 0, t = 0;
  if (a <= kDegenerate && e <= kDegenerate) {
    s = t = 0;
  } else if (a <= kDegenerate) {
    t = std::clamp(f / e, btScalar(0), btScalar(1));
  } else {
    const btScalar c = d1.dot(r);
    if (e <= kDegenerate) {
      s = std::clamp(-c / a, btScalar(0), btScalar(1));
    } else {
      const btScalar b = d1.dot(d2), denom = a * e - b * b;
      s = denom > 0 ? std::clamp((b * f - c * e) / denom, btScalar(0), btScalar(1)) : 0;
      t = (b * s + f) / e;
      if (t < 0) {
        t = 0;
        s = std::clamp(-c / a, btScalar(0), btScalar(1));
      } else if (t > 1) {
        t = 1;
        s = std::clamp((b - c) / a, btScalar(0), btScalar(1));
      }
    }
  }
  c1 = p1 + d1 * s;
  c2 = p2 + d2 * t;
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

}  // namespace

btVector3 closestPointOnTriangle(const btVector3& p, const btVector3 t[3]) {
  const btVector3 &a = t[0], &b = t[1], &c = t[2];
  const btVector3 ab = b - a, ac = c - a, ap = p - a;
  const btScalar d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0 && d2 <= 0) return a;
  const btVector3 bp = p - b;
  const btScalar d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0 && d4 <= d3) return b;
  const btScalar vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) return a + ab * (d1 / (d1 - d3));
  const btVector3 cp = p - c;
  const btScalar d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0 && d5 <= d6) return c;
  const btScalar vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) return a + ac * (d2 / (d2 - d6));
  const btScalar va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
  const btScalar denom = 1 / (va + vb + vc);
  return a + ab * (vb * denom) + ac * (vc * denom);
}

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
  const btVector3 centre = s.pose.getOrigin() + basis.getColumn(axis) * (side * s.a[axis]);
  // The flat part of the face: the core's face pushed out by the margin.
  const btVector3 du = basis.getColumn(u) * (s.a[u] - s.radius), dv = basis.getColumn(v) * (s.a[v] - s.radius);
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

bool triangleContact(const ShapeInChunk& shape, const btVector3 triangle[3], btScalar threshold, TriangleContact& out,
                     unsigned long long& gjk_calls) {
  switch (shape.special) {
    case 1:
      return sphereContact(shape, triangle, threshold, out, gjk_calls);
    case 2:
      return capsuleContact(shape, triangle, threshold, out, gjk_calls);
    default:
      return gjkTriangleContact(shape, triangle, threshold, out, gjk_calls);
  }
}

}  // namespace vtp::physics
