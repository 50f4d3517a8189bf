#pragma once
// The Bullet shape of an engine-neutral ConvexShape (shape.h), for the contact code that runs on Bullet's shapes.
#include <BulletCollision/CollisionShapes/btConvexShape.h>

#include <memory>

#include "vtp/physics/shape.h"

namespace vtp::physics {

/// An owned Bullet shape (deleted through Bullet's own aligned operator delete, which its classes declare).
using BulletShapePtr = std::unique_ptr<btConvexShape>;

/// `shape` as a Bullet shape with the same surface, margin included (one allocation; a hull copies its points).
/// Precondition: validate(shape) succeeded.
BulletShapePtr makeBulletShape(const ConvexShape& shape);

}  // namespace vtp::physics
