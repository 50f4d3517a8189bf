#pragma once
// The `bullet-bvh` collision mode: the design the published system started from. Every chunk with triangles is one
// static btCollisionObject in Bullet's own broadphase holding a btBvhTriangleMeshShape (quantised BVH) over the
// mesher's triangles of that chunk (float xyz and int32 indices, kept alive by the mode, in world units relative to
// the chunk origin). All chunks are meshed and their BVHs built when the mode opens; an edit re-meshes and rebuilds
// every chunk whose 10^3 box it changed, in the same tick, before the step.

#include <memory>

#include "sim_world.h"

namespace vtp::tools::sim {

std::unique_ptr<TerrainBackend> makeBulletBvhBackend();

}  // namespace vtp::tools::sim
