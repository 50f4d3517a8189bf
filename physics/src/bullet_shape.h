#pragma once
// The Bullet shape of an engine-neutral ConvexShape (shape.h), for the contact code that runs on Bullet's shapes.
#include <BulletCollision/CollisionShapes/btConvexShape.h>

#include <memory>

#include "vtp/physics/shape.h"

namespace vtp::physics {

/// Deletes a Bullet shape through its own (aligned) operator delete.
struct BulletShapeDelete {
  void operator()(btConvexShape* shape) const noexcept { delete shape; }
};
using BulletShapePtr = std::unique_ptr<btConvexShape, BulletShapeDelete>;

/// `shape` as a Bullet shape with the same surface, margin included. Precondition: validate(shape) succeeded.
BulletShapePtr makeBulletShape(const ConvexShape& shape);

}  // namespace vtp::physics
