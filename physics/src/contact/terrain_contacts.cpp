// TerrainPhysics::contacts: the engine-neutral contact query (contact.h).
#include <cmath>

#include "contact/gjk_shape.h"
#include "contact/chunk_contacts.h"
#include "vtp/physics/terrain_physics.h"

namespace vtp::physics {

Status TerrainPhysics::contacts(const ConvexShape& shape, const Pose& pose, std::vector<ChunkManifold>& out,
                                const ContactOptions& options, ContactStats* stats) {
  out.clear();
  if (Status s = validate(shape); !s) return s;
  if (Status s = validate(pose); !s) return s;
  if (!std::isfinite(options.contact_distance) || options.contact_distance < 0)
    return Error{ErrorCode::kInvalidArgument, "contact_distance must be finite and >= 0", {}};

  const GjkShapePtr bt = makeGjkShape(shape);
  const auto& q = pose.rotation;
  btQuaternion rotation{btScalar(q[0]), btScalar(q[1]), btScalar(q[2]), btScalar(q[3])};
  rotation.normalize();
  const btMatrix3x3 basis(rotation);
  Aabb box;
  {
    std::array<double, 3> min, max;
    shapeBounds(*bt, basis, pose.position.array(), options.contact_distance, min, max);
    // A valid shape too large for a float (a radius of 1e39) has infinite bounds: it reaches far beyond 2^16 voxels.
    for (int a = 0; a < 3; ++a) {
      if (!std::isfinite(min[std::size_t(a)]) || !std::isfinite(max[std::size_t(a)])) {
        return Error{ErrorCode::kOutOfRange, "contacts: the shape reaches beyond 2^16 voxels of the origin", {}};
      }
    }
    box = {{min[0], min[1], min[2]}, {max[0], max[1], max[2]}};
  }
  thread_local std::vector<ChunkTouch> touches;
  if (Status s = m_masks->query(box, touches); !s) return s;

  thread_local ContactScratch scratch;
  ContactCounters counters;
  std::uint64_t chunks = 0;
  const auto& materials = m_world.materials();
  for (const ChunkTouch& touch : touches) {
    if (!touch.solid || touch.tag != MaskTag::kMixed) continue;
    if (chunkBeyondReach(*bt, basis, pose.position.array(), touch.chunk, m_voxel_size, options.contact_distance)) continue;
    auto pin = m_colliders->acquire(touch.chunk);
    if (!pin) {
      out.clear();
      return pin.error();
    }
    ++chunks;
    std::array<ChunkContact, kManifoldPoints> kept;
    ChunkManifold m;
    m.chunk = touch.chunk;
    m.count = chunkManifold(*pin.value(), *bt, basis, pose.position.array(), touch.chunk, {box.min.x, box.min.y, box.min.z},
                            {box.max.x, box.max.y, box.max.z}, m_voxel_size, btScalar(options.contact_distance),
                            options.one_sided, scratch, counters, kept);
    if (m.count == 0) continue;
    const std::array<double, 3> origin = chunkOriginWorld(touch.chunk, m_voxel_size);
    for (int i = 0; i < m.count; ++i) {
      const ChunkContact& c = kept[std::size_t(i)];
      ContactPoint& p = m.points[std::size_t(i)];
      for (int a = 0; a < 3; ++a) {
        p.point[std::size_t(a)] = origin[std::size_t(a)] + double(c.contact.point[a]);
        p.normal[std::size_t(a)] = c.contact.normal[a];
      }
      p.depth = -double(c.contact.distance);
      p.triangle = c.triangle;
      p.material = c.material;
      p.friction = materials[c.material].friction;
      p.restitution = materials[c.material].restitution;
    }
    out.push_back(m);
  }
  if (stats) {
    stats->chunks += chunks;
    stats->triangles += counters.triangles;
    stats->gjk_calls += counters.gjk_calls;
  }
  return {};
}

}  // namespace vtp::physics
