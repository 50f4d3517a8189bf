#pragma once
// The `vtp` collision mode: the world's TerrainPhysics (mask index and byte-budgeted collider cache, colliders built
// on first contact) in a btDiscreteDynamicsWorld through BulletTerrain (physics/bullet/bullet_terrain.h). Edits
// go to the World, whose listeners update the masks and drop the touched colliders; then wakeBodies() activates the
// bodies resting there. Rays go through TerrainPhysics::raycastClosest.

#include <memory>

#include "sim_world.h"

namespace vtp::tools::sim {

std::unique_ptr<TerrainBackend> makeVtpBackend();

}  // namespace vtp::tools::sim
