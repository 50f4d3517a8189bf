#include "contact/chunk_contacts.h"

#include <BulletCollision/CollisionShapes/btBoxShape.h>
#include <BulletCollision/CollisionShapes/btCapsuleShape.h>
#include <BulletCollision/CollisionShapes/btConvexHullShape.h>
#include <BulletCollision/CollisionShapes/btConvexPointCloudShape.h>
#include <BulletCollision/CollisionShapes/btCylinderShape.h>
#include <BulletCollision/CollisionShapes/btMultiSphereShape.h>
#include <BulletCollision/CollisionShapes/btSphereShape.h>

#include <algorithm>
#include <cmath>

#include "vtp/terrain/assert.h"

namespace vtp::physics {

std::array<double, 3> chunkOriginWorld(terrain::ChunkCoord chunk, double voxel_size) {
  const terrain::VoxelCoord o = terrain::chunkOrigin(chunk);
  return {double(o.x) * voxel_size, double(o.y) * voxel_size, double(o.z) * voxel_size};
}

void shapeBounds(const btConvexShape& shape, const btMatrix3x3& basis, const std::array<double, 3>& position,
                 double grow, std::array<double, 3>& min, std::array<double, 3>& max) {
  btVector3 lo, hi;
  shape.getAabb(btTransform(basis), lo, hi);
  for (int a = 0; a < 3; ++a) {
    min[std::size_t(a)] = position[std::size_t(a)] + double(lo[a]) - grow;
    max[std::size_t(a)] = position[std::size_t(a)] + double(hi[a]) + grow;
  }
}

bool chunkBeyondReach(const btConvexShape& shape, const btMatrix3x3& basis, const std::array<double, 3>& position,
                      terrain::ChunkCoord chunk, double voxel_size, double threshold) {
  // The box the chunk's triangles lie in, a little larger than the spill. [Unit: world units]
  const std::array<double, 3> origin = chunkOriginWorld(chunk, voxel_size);
  const double spill = 1.001 * voxel_size, side = double(terrain::kChunkSize) * voxel_size;
  auto distanceTo = [&](const std::array<double, 3>& p) {
    double d2 = 0;
    for (std::size_t a = 0; a < 3; ++a) {
      const double lo = origin[a] - spill, hi = origin[a] + side + spill;
      const double d = p[a] < lo ? lo - p[a] : p[a] > hi ? p[a] - hi : 0;
      d2 += d * d;
    }
    return std::sqrt(d2);
  };
  // A body within a chunk's size: the mask query's chunks are already those its box reaches; not worth a test.
  const double small = double(terrain::kChunkSize) * voxel_size;
  const int type = shape.getShapeType();
  if (type == SPHERE_SHAPE_PROXYTYPE) {
    const double radius = static_cast<const btSphereShape&>(shape).getRadius();
    if (radius < small) return false;
    return distanceTo(position) > radius + threshold;
  }
  if (type == BOX_SHAPE_PROXYTYPE &&
      double(static_cast<const btBoxShape&>(shape).getHalfExtentsWithMargin().length()) < small)
    return false;
  if (type == CAPSULE_SHAPE_PROXYTYPE &&
      double(static_cast<const btCapsuleShape&>(shape).getHalfHeight() +
             static_cast<const btCapsuleShape&>(shape).getRadius()) < small)
    return false;
  if (type == CONVEX_HULL_SHAPE_PROXYTYPE) {
    // The hull's points (a dozen, usually) bound it.
    const auto& hull = static_cast<const btConvexHullShape&>(shape);
    btScalar far2 = 0;
    for (int k = 0; k < hull.getNumPoints(); ++k) far2 = std::max(far2, hull.getScaledPoint(k).length2());
    if (double(std::sqrt(far2) + hull.getMargin()) < 0.5 * small) return false;
  }
  if (type == CAPSULE_SHAPE_PROXYTYPE) {
    // The distance from the box to the capsule's segment: convex along the segment, so a ternary search finds its
    // least; 40 halvings of a thirds-interval leave under 1e-7 of the length, which the slack below covers.
    const auto& capsule = static_cast<const btCapsuleShape&>(shape);
    const btVector3 axis = basis.getColumn(capsule.getUpAxis()) * capsule.getHalfHeight();
    const std::array<double, 3> a{position[0] - axis.x(), position[1] - axis.y(), position[2] - axis.z()};
    const std::array<double, 3> d{2.0 * axis.x(), 2.0 * axis.y(), 2.0 * axis.z()};
    auto at = [&](double t) { return distanceTo({a[0] + d[0] * t, a[1] + d[1] * t, a[2] + d[2] * t}); };
    double lo = 0, hi = 1;
    for (int i = 0; i < 40; ++i) {
      const double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
      if (at(m1) < at(m2)) {
        hi = m2;
      } else {
        lo = m1;
      }
    }
    const double length = 2.0 * double(capsule.getHalfHeight());
    return at(0.5 * (lo + hi)) - 1e-6 * length > double(capsule.getRadius()) + threshold;
  }
  // Any other shape: the sphere around its bounding box.
  btVector3 lo, hi;
  shape.getAabb(btTransform(basis), lo, hi);
  const btVector3 centre = (lo + hi) * btScalar(0.5);
  const double radius = double((hi - lo).length()) * 0.5;
  return distanceTo({position[0] + double(centre.x()), position[1] + double(centre.y()), position[2] + double(centre.z())}) >
         radius + threshold;
}

ShapeInChunk placeInChunk(const btConvexShape& shape, const btMatrix3x3& basis, const std::array<double, 3>& position,
                          terrain::ChunkCoord chunk, double voxel_size) {
  const std::array<double, 3> origin = chunkOriginWorld(chunk, voxel_size);
  ShapeInChunk s;
  s.shape = &shape;
  s.pose.setBasis(basis);
  s.pose.setOrigin(btVector3(btScalar(position[0] - origin[0]), btScalar(position[1] - origin[1]),
                             btScalar(position[2] - origin[2])));
  // A capsule's core or a cylinder's axis: the segment through the origin along local axis `up`, `half` each way.
  auto setAxis = [&s](int up, btScalar half) {
    btVector3 axis(0, 0, 0);
    axis[up] = half;
    s.a = s.pose * -axis;
    s.b = s.pose * axis;
  };
  const int type = shape.getShapeType();
  if (type == SPHERE_SHAPE_PROXYTYPE) {
    s.special = Special::kSphere;
    s.radius = static_cast<const btSphereShape&>(shape).getRadius();
  } else if (type == CAPSULE_SHAPE_PROXYTYPE) {
    const auto& capsule = static_cast<const btCapsuleShape&>(shape);
    s.special = Special::kCapsule;
    s.radius = capsule.getRadius();
    setAxis(capsule.getUpAxis(), capsule.getHalfHeight());
  } else if (type == BOX_SHAPE_PROXYTYPE) {
    const auto& box = static_cast<const btBoxShape&>(shape);
    s.special = Special::kBox;
    s.core_half = box.getHalfExtentsWithoutMargin();
    s.radius = box.getMargin();
  } else {
    s.radius = shape.getMargin();  // GJK/EPA's contacts lie on the margin-rounded surface
    if (type == CYLINDER_SHAPE_PROXYTYPE) {
      const auto& cylinder = static_cast<const btCylinderShape&>(shape);
      setAxis(cylinder.getUpAxis(), cylinder.getHalfExtentsWithMargin()[cylinder.getUpAxis()]);
      s.side_radius = cylinder.getRadius();
    }
  }
  return s;
}

int gatherTriangles(const Collider& collider, const std::array<double, 3>& min, const std::array<double, 3>& max,
                    double voxel_size, ContactScratch& scratch) {
  GridBox box;
  if (!gridBoxOf(min, max, collider.chunk(), voxel_size, box)) return 0;
  const auto capacity = std::size_t(std::max(collider.triangleCount(), 1));
  if (scratch.ids.size() < capacity) {
    scratch.ids.resize(capacity);
    scratch.vertices.resize(3 * capacity);
  }
  return collider.gather(box, scratch.ids, scratch.vertices, voxel_size);
}

bool faceFront(const btVector3 t[3], const ShapeInChunk& shape, TriangleContact& c) {
  btVector3 n = (t[1] - t[0]).cross(t[2] - t[0]);
  if (c.normal.dot(n) >= 0) return true;  // from the front: nearly every contact stops here
  // Separated from behind: the body does not touch this face (within a large body's contact threshold, a slab's
  // underside seen through the slab); turned round, it became a penetration as deep as the body and pushed a sphere
  // of radius 50 resting on a one-voxel slab down through it.
  if (c.distance >= 0) return false;
  const btScalar len = n.length();
  if (len < btScalar(1e-12)) return true;
  n /= len;
  const btVector3 centre = shape.pose.getOrigin();
  for (int k = 0; k < 3; ++k) {  // counter-clockwise seen from the front: over the face is left of every edge
    if ((t[(k + 1) % 3] - t[k]).cross(centre - t[k]).dot(n) < 0) return false;
  }
  // The shape's deepest point along -n (its margin-rounded surface), against the face's plane.
  const btVector3 deepest = shape.pose * shape.shape->localGetSupportingVertex(shape.pose.getBasis().transpose() * -n);
  c.distance = (deepest - t[0]).dot(n);
  c.normal = n;
  c.point = deepest - n * c.distance;
  return true;
}

void correctInternalEdge(const btVector3 t[3], unsigned flags, const ShapeInChunk& shape, TriangleContact& c) {
  btVector3 n = (t[1] - t[0]).cross(t[2] - t[0]);
  const btScalar len = n.length();
  if (len < btScalar(1e-12)) return;
  n /= len;
  const btScalar along = c.normal.dot(n);
  if (along >= btScalar(1 - 1e-6) || along <= 0) return;  // the face normal already, or a contact from behind
  // Barycentric coordinates of the point; edge k (corner k to k + 1) holds it when the opposite corner's weight is ~0.
  const btVector3 e0 = t[1] - t[0], e1 = t[2] - t[0], d = c.point - t[0];
  const btScalar d00 = e0.dot(e0), d01 = e0.dot(e1), d11 = e1.dot(e1), d20 = d.dot(e0), d21 = d.dot(e1);
  const btScalar denom = d00 * d11 - d01 * d01;
  const btScalar w1 = (d11 * d20 - d01 * d21) / denom, w2 = (d00 * d21 - d01 * d20) / denom;
  const btScalar weight[3] = {1 - w1 - w2, w1, w2};
  constexpr btScalar kOnEdge = btScalar(1e-4);
  bool on_edge = false;
  for (int k = 0; k < 3; ++k) {
    if (weight[(k + 2) % 3] > kOnEdge) continue;
    if (flags >> k & 1u) return;  // a sharp convex edge: its direction is the right normal
    on_edge = true;
  }
  if (!on_edge) return;  // inside the face: EPA's choice among deep axes stands
  // The face normal with the distance kept, as Bullet's btAdjustInternalEdgeContacts does; but where Bullet keeps the
  // body's point (on the rounded surface, off towards the edge), the contact moves to the shape's point facing the
  // face from the same core point. A rolling ball's point off to the side moves towards the terrain as the ball turns
  // (a ghost bump every triangle); its lowest point along the face normal does not.
  const btVector3 on_body = c.point + c.normal * c.distance;
  btVector3 facing = on_body + (c.normal - n) * shape.radius;  // the rounded core's point facing the face
  if (shape.side_radius > 0) {
    // A cylinder rolls about its axis: the point facing the face lies on the rim of the disk through the axis point
    // nearest the contact (unless the face normal runs along the axis: a cylinder standing on its end keeps the
    // generic point).
    const btVector3 axis = shape.b - shape.a;
    const btScalar length2 = axis.length2();
    if (length2 > btScalar(1e-12)) {
      const btScalar s = std::clamp((on_body - shape.a).dot(axis) / length2, btScalar(0), btScalar(1));
      const btVector3 away = n.dot(axis) / length2 * axis - n;  // -n without its part along the axis
      if (away.length2() > btScalar(1e-6)) facing = shape.a + axis * s + away.normalized() * shape.side_radius;
    }
  }
  c.normal = n;
  c.point = facing - n * c.distance;
}

void chunkContacts(const Collider& collider, const ShapeInChunk& shape, const std::array<double, 3>& min,
                   const std::array<double, 3>& max, double voxel_size, btScalar threshold, ContactScratch& scratch,
                   ContactCounters& counters, bool correct_edges, bool one_sided) {
  VTP_ASSERT(!correct_edges || collider.hasEdgeFlags(), "edge correction needs edge flags (ColliderUse::kContacts)");
  scratch.contacts.clear();
  const int n = gatherTriangles(collider, min, max, voxel_size, scratch);
  counters.triangles += unsigned(n);
  // The shape's bounding ball about its origin (radius < 0: none), grown by the threshold below: a triangle whose
  // box lies outside it is farther than the threshold from the shape (the box holds the triangle), so its test need
  // not run. Exact, with a slack of 1e-4 of the reach for the float arithmetic. It skips the triangles in the corners
  // of the shape's box, which a large sphere's box has many of.
  const btVector3 ball_centre = shape.pose.getOrigin();  // a capsule's segment is centred there too (placeInChunk)
  btScalar ball_radius = -1;
  switch (shape.special) {
    case Special::kSphere: ball_radius = shape.radius; break;
    case Special::kCapsule: ball_radius = (shape.b - shape.a).length() * btScalar(0.5) + shape.radius; break;
    case Special::kBox: ball_radius = shape.core_half.length() + shape.radius; break;
    case Special::kNone: break;
  }
  ShapeInChunk hull_aware = shape;
  if (n > 0 && shape.special == Special::kNone && shape.shape->getShapeType() == CONVEX_HULL_SHAPE_PROXYTYPE) {
    // The hull's points in the chunk's frame once, for every triangle's separating-axis rejection; the farthest
    // bounds its ball.
    const auto& hull = static_cast<const btConvexHullShape&>(*shape.shape);
    scratch.core_points.resize(std::size_t(hull.getNumPoints()));
    btScalar far2 = 0;
    for (int k = 0; k < hull.getNumPoints(); ++k) {
      const btVector3 point = shape.pose * hull.getScaledPoint(k);
      scratch.core_points[std::size_t(k)] = point;
      far2 = std::max(far2, (point - ball_centre).length2());
    }
    hull_aware.core_points = scratch.core_points.data();
    hull_aware.core_point_count = hull.getNumPoints();
    ball_radius = std::sqrt(far2) + shape.radius;
  }
  const bool ball_test = ball_radius >= 0;
  const btScalar ball_reach = ball_radius + threshold;
  const float ball_reach2 = float(ball_reach * ball_reach) * 1.0002f;
  const float ball_at[3] = {float(ball_centre.x()), float(ball_centre.y()), float(ball_centre.z())};
  for (int i = 0; i < n; ++i) {
    const auto* v = &scratch.vertices[3 * std::size_t(i)];
    if (ball_test) {
      float d2 = 0;
      for (int a = 0; a < 3; ++a) {
        const float lo = std::min(v[0][a], std::min(v[1][a], v[2][a])), hi = std::max(v[0][a], std::max(v[1][a], v[2][a]));
        const float p = ball_at[a];
        const float d = p < lo ? lo - p : p > hi ? p - hi : 0.0f;
        d2 += d * d;
      }
      if (d2 > ball_reach2) continue;
    }
    const btVector3 triangle[3] = {btVector3(v[0][0], v[0][1], v[0][2]), btVector3(v[1][0], v[1][1], v[1][2]),
                                   btVector3(v[2][0], v[2][1], v[2][2])};
    ChunkContact c;
    if (!triangleContact(hull_aware, triangle, threshold, c.contact, counters.gjk_calls)) continue;
    c.triangle = scratch.ids[std::size_t(i)];
    const ColliderTriangle stored = collider.triangle(c.triangle);
    c.material = stored.material;
    if (one_sided && !faceFront(triangle, shape, c.contact)) continue;
    if (correct_edges) correctInternalEdge(triangle, stored.edge_flags, shape, c.contact);
    scratch.contacts.push_back(c);
    if (shape.special == Special::kBox) {
      // A box on the face: its corners, so it stands on four points from the first step.
      const btVector3 face_normal = (triangle[1] - triangle[0]).cross(triangle[2] - triangle[0]).normalized();
      if (c.contact.normal.dot(face_normal) < btScalar(0.99)) continue;
      TriangleContact face[kMaxFacePoints];
      const int m = boxFacePoints(shape, triangle, face_normal, threshold, face);
      for (int k = 0; k < m; ++k) {
        // No deeper than GJK/EPA's depth, the least overlap (the normals differ by up to 8 degrees).
        face[k].distance = std::max(face[k].distance, c.contact.distance);
        scratch.contacts.push_back({face[k], c.triangle, c.material});
      }
    }
  }
}

int reduceContacts(std::span<const ChunkContact> contacts, std::span<ChunkContact, kManifoldPoints> out) {
  const std::size_t n = contacts.size();
  if (n <= std::size_t(kManifoldPoints)) {
    // All of them, but one per body point and normal: an internal edge's corrected contact can stand where the
    // face's own does (under a ball's centre); the deeper is kept. (Past four points the spread picks below never
    // take a point twice.)
    auto onBody = [](const TriangleContact& c) { return c.point + c.normal * c.distance; };
    int kept = 0;
    for (const ChunkContact& c : contacts) {
      int same = -1;
      for (int k = 0; k < kept && same < 0; ++k) {
        const TriangleContact& o = out[std::size_t(k)].contact;
        if ((onBody(o) - onBody(c.contact)).length2() < btScalar(1e-10) &&
            o.normal.dot(c.contact.normal) > btScalar(1 - 1e-6)) {
          same = k;
        }
      }
      if (same < 0) {
        out[std::size_t(kept++)] = c;
      } else if (c.contact.distance < out[std::size_t(same)].contact.distance) {
        out[std::size_t(same)] = c;
      }
    }
    return kept;
  }
  auto at = [&](std::size_t i) -> const btVector3& { return contacts[i].contact.point; };
  // Picks the index maximising score(i) among those not yet chosen.
  std::array<std::size_t, kManifoldPoints> chosen{};
  auto pick = [&](int k, auto&& score) {
    std::size_t best = n;
    btScalar best_score = -1;
    for (std::size_t i = 0; i < n; ++i) {
      if (std::find(chosen.begin(), chosen.begin() + k, i) != chosen.begin() + k) continue;
      const btScalar s = score(i);
      if (s > best_score) best_score = s, best = i;
    }
    chosen[std::size_t(k)] = best;
  };
  // The deepest; among points as deep (a box lying flat), the one farthest from their centre, so the rest can span
  // the whole contact area.
  btScalar deepest = contacts[0].contact.distance;
  btVector3 centre(0, 0, 0);
  for (const ChunkContact& c : contacts) {
    deepest = std::min(deepest, c.contact.distance);
    centre += c.contact.point;
  }
  centre /= btScalar(n);
  constexpr btScalar kAsDeep = btScalar(2e-5);
  pick(0, [&](std::size_t i) {
    const btScalar d = contacts[i].contact.distance;
    return d <= deepest + kAsDeep ? 1 + (at(i) - centre).length2() : deepest - d;  // (the second is < 0)
  });
  const btVector3 p0 = at(chosen[0]);
  pick(1, [&](std::size_t i) { return (at(i) - p0).length2(); });
  const btVector3 p1 = at(chosen[1]);
  pick(2, [&](std::size_t i) { return (p1 - p0).cross(at(i) - p0).length2(); });
  const btVector3 p2 = at(chosen[2]);
  // A quadrilateral's area is half the cross product of its diagonals; try the three places the fourth point can go.
  pick(3, [&](std::size_t i) {
    const btVector3& p = at(i);
    return std::max({(p0 - p2).cross(p1 - p).length2(), (p0 - p).cross(p1 - p2).length2(),
                     (p0 - p1).cross(p - p2).length2()});
  });
  for (int k = 0; k < kManifoldPoints; ++k) out[std::size_t(k)] = contacts[chosen[std::size_t(k)]];
  return kManifoldPoints;
}

int chunkManifold(const Collider& collider, const btConvexShape& shape, const btMatrix3x3& basis,
                  const std::array<double, 3>& position, terrain::ChunkCoord chunk, const std::array<double, 3>& min,
                  const std::array<double, 3>& max, double voxel_size, btScalar threshold, bool one_sided,
                  ContactScratch& scratch, ContactCounters& counters, std::span<ChunkContact, kManifoldPoints> kept) {
  switch (shape.getShapeType()) {  // no points: GJK would read past the empty array (on Bullet's own ground too)
    case CONVEX_HULL_SHAPE_PROXYTYPE:
      if (static_cast<const btConvexHullShape&>(shape).getNumPoints() == 0) return 0;
      break;
    case CONVEX_POINT_CLOUD_SHAPE_PROXYTYPE:
      if (static_cast<const btConvexPointCloudShape&>(shape).getNumPoints() == 0) return 0;
      break;
    case MULTI_SPHERE_SHAPE_PROXYTYPE:
      if (static_cast<const btMultiSphereShape&>(shape).getSphereCount() == 0) return 0;
      break;
    default: break;
  }
  const ShapeInChunk placed = placeInChunk(shape, basis, position, chunk, voxel_size);
  chunkContacts(collider, placed, min, max, voxel_size, threshold, scratch, counters, /*correct_edges=*/true,
                one_sided);
  return reduceContacts(scratch.contacts, kept);
}

}  // namespace vtp::physics
