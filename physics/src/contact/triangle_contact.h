#pragma once
// One convex shape against one triangle: the contact Bullet's GJK/EPA (btGjkPairDetector with
// btGjkEpaPenetrationDepthSolver, the triangle with no margin) would report, and specialised closed-form tests for
// spheres, capsules and boxes that give the same answer without GJK's iterations. Everything here is in one chunk's frame:
// world units relative to the chunk origin, where single precision keeps 1e-5 voxel.
#include <LinearMath/btTransform.h>
#include <LinearMath/btVector3.h>

class btConvexShape;

namespace vtp::physics {

/// A contact between a shape and a triangle, as Bullet defines one: `normal` points from the triangle to the shape
/// (out of the terrain), `point` lies on the triangle, `distance` is negative when they overlap.
struct TriangleContact {
  btVector3 normal;
  btVector3 point;
  btScalar distance = 0;
};

/// Which closed form serves a shape (the rest go to GJK/EPA).
enum class Special { kNone, kSphere, kCapsule, kBox };

/// The shape a contact query is about, in the chunk's frame. The specialised shapes are, as Bullet sees them, a core
/// rounded by `radius`: a sphere's core is its centre (the pose origin), a capsule's the segment a..b, a box's the box
/// of half extents `core_half` around the pose (its margin is the radius).
struct ShapeInChunk {
  const btConvexShape* shape = nullptr;
  btTransform pose;  ///< The shape's local frame in the chunk's frame.
  Special special = Special::kNone;
  btVector3 a, b;          ///< Capsule core; a cylinder's axis, end to end.
  btVector3 core_half;     ///< Box core.
  btScalar radius = 0;     ///< Sphere or capsule radius, box margin; other shapes' margin (their GJK rounding).
  btScalar side_radius = 0;  ///< A cylinder's (GJK's shape) radius, margin included; 0 for other shapes.
  /// A convex hull's points in the chunk's frame (its core: what GJK/EPA's support reads), for the separating-axis
  /// rejection below; null for other shapes, which ask the shape's support function.
  const btVector3* core_points = nullptr;
  int core_point_count = 0;
};

/// Whether the triangle's normal, one of its three edge normals in its plane or the direction from the shape's origin to
/// the triangle's nearest point holds the shape's core at least `reach` (the shape's margin plus the contact
/// threshold) away from the triangle: then GJK/EPA finds no contact closer than the threshold, and need not run.
/// Exact: a separating axis bounds the distance from below.
bool coreSeparated(const ShapeInChunk& shape, const btVector3 triangle[3], btScalar reach);

/// Contacts closer than `threshold` (distance < threshold) are reported. Returns whether there is one.
/// Generic GJK/EPA; counts in `gjk_calls`.
bool gjkTriangleContact(const ShapeInChunk& shape, const btVector3 triangle[3], btScalar threshold, TriangleContact& out,
                        unsigned long long& gjk_calls);

/// The specialised test when `shape.special` is set (falling back to GJK/EPA where the closed form has no unique
/// answer, e.g. a sphere centre on the triangle), else GJK/EPA unless coreSeparated() rules a contact out.
bool triangleContact(const ShapeInChunk& shape, const btVector3 triangle[3], btScalar threshold, TriangleContact& out,
                     unsigned long long& gjk_calls);

/// The most points boxFacePoints() writes.
inline constexpr int kMaxFacePoints = 7;

/// A box lying on a triangle (Special::kBox): the flat part of the box face turned most towards the triangle
/// (within ~8 degrees of facing it), clipped to the triangle's prism, each corner a contact along the triangle's
/// normal `n` (unit, out of the terrain) when closer than `threshold`. GJK/EPA gives one point per triangle; these
/// give a box resting on flat ground its four corners in one step. Returns how many were written.
int boxFacePoints(const ShapeInChunk& shape, const btVector3 triangle[3], const btVector3& n, btScalar threshold,
                  TriangleContact out[kMaxFacePoints]);

/// The point of triangle `t` closest to `p`.
btVector3 closestPointOnTriangle(const btVector3& p, const btVector3 t[3]);

}  // namespace vtp::physics
