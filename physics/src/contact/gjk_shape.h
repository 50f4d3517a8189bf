#pragma once
// A ConvexShape (shape.h) as the Bullet convex shape that GJK/EPA and the engine-neutral contact code run on.
#include <BulletCollision/CollisionShapes/btConvexShape.h>

#include <memory>

#include "vtp/physics/shape.h"

namespace vtp::physics {

/// An owned Bullet shape (deleted through Bullet's own aligned operator delete, which its classes declare).
using GjkShapePtr = std::unique_ptr<btConvexShape>;

/// `shape` as a Bullet shape with the same surface, margin included (one allocation; a hull copies its points).
/// Precondition: validate(shape) succeeded.
GjkShapePtr makeGjkShape(const ConvexShape& shape);

}  // namespace vtp::physics
