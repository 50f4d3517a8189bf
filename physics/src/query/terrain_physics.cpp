#include "vtp/physics/terrain_physics.h"

namespace vtp::physics {

Result<std::unique_ptr<TerrainPhysics>> TerrainPhysics::create(terrain::World& world, TerrainPhysicsOptions options) {
  auto masks = MaskIndex::create(world, options.masks);
  if (!masks) return masks.error();
  auto colliders = ColliderCache::create(world, options.colliders);
  if (!colliders) return colliders.error();
  return std::unique_ptr<TerrainPhysics>(
      new TerrainPhysics(world, std::move(masks.value()), std::move(colliders.value())));
}

TerrainPhysics::TerrainPhysics(terrain::World& world, std::unique_ptr<MaskIndex> masks,
                               std::unique_ptr<ColliderCache> colliders)
    : m_world(world), m_voxel_size(world.voxelSize()), m_masks(std::move(masks)), m_colliders(std::move(colliders)) {}

}  // namespace vtp::physics
