#include "contact/gjk_shape.h"

#include <BulletCollision/CollisionShapes/btBoxShape.h>
#include <BulletCollision/CollisionShapes/btCapsuleShape.h>
#include <BulletCollision/CollisionShapes/btConvexHullShape.h>
#include <BulletCollision/CollisionShapes/btCylinderShape.h>
#include <BulletCollision/CollisionShapes/btSphereShape.h>

namespace vtp::physics {
namespace {

btVector3 toBt(const std::array<double, 3>& v) { return btVector3(btScalar(v[0]), btScalar(v[1]), btScalar(v[2])); }

}  // namespace

GjkShapePtr makeGjkShape(const ConvexShape& shape) {
  btConvexShape* out = nullptr;
  switch (shape.kind) {
    case ShapeKind::kSphere:
      out = new btSphereShape(btScalar(shape.radius));
      break;
    case ShapeKind::kCapsule:
      out = new btCapsuleShape(btScalar(shape.radius), btScalar(2 * shape.half_height));
      break;
    case ShapeKind::kBox:
      out = new btBoxShape(toBt(shape.half_extents));
      out->setMargin(btScalar(shape.margin));
      break;
    case ShapeKind::kCylinder:
      out = new btCylinderShape(toBt(shape.half_extents));
      out->setMargin(btScalar(shape.margin));
      break;
    case ShapeKind::kConvexHull: {
      auto* hull = new btConvexHullShape(&shape.points[0][0], int(shape.points.size()), sizeof(shape.points[0]));
      hull->setMargin(btScalar(shape.margin));
      out = hull;
      break;
    }
  }
  return GjkShapePtr(out);
}

}  // namespace vtp::physics
