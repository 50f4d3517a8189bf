#pragma once
// Bullet's counterpart of one chunk collider, for the profiler's side-by-side rows: a btTriangleIndexVertexArray over
// float xyz and int32 indices (the mesh Bullet needs its caller to keep) and a btBvhTriangleMeshShape with a
// quantised or plain BVH, on exactly the collider's triangles (same ids), in world units relative to the chunk origin.

#include <cstddef>
#include <memory>
#include <vector>

#include "vtp/physics/collider.h"

class btBvhTriangleMeshShape;
class btTriangleIndexVertexArray;
struct btTriangleInfoMap;

namespace vtp::tools {

/// Counts Bullet's heap through btAlignedAllocSetCustom (malloc_usable_size of each block). Call once at start-up.
void installBulletAllocationCounter();
/// Bytes Bullet holds now. [Unit: byte]
std::size_t bulletLiveBytes();

class BulletChunk {
 public:
  /// The input arrays only; build() makes the shape.
  BulletChunk(const physics::Collider& collider, double voxel_size);
  ~BulletChunk();
  BulletChunk(const BulletChunk&) = delete;
  BulletChunk& operator=(const BulletChunk&) = delete;

  /// Builds (or rebuilds) the mesh interface and the BVH shape; this is the build the profiler times (after
  /// release(), so the time holds no freeing of an earlier build).
  void build(bool quantized);
  /// Frees the shape, its edge info and the mesh interface (not the caller's arrays).
  void release();
  /// Bullet's counterpart of the collider's edge flags on the shape built last: btGenerateInternalEdgeInfo, the
  /// btTriangleInfoMap that btAdjustInternalEdgeContacts reads (each triangle's edge angles, found by a BVH query per
  /// triangle). The profiler times it next to our build with its flags. Returns the map's bytes. [Unit: byte]
  std::size_t generateEdgeInfo();
  /// Bytes of the shape and mesh interface (Bullet's heap) plus the caller's float and int arrays. [Unit: byte]
  std::size_t bytes() const { return m_bullet_bytes + m_vertices.capacity() * sizeof(float) + m_indices.capacity() * sizeof(int); }

  /// Closest hit on the segment from -> to (double-sided, Bullet's default): fraction in [0, 1] and triangle id.
  bool closestHit(const float* from, const float* to, float& fraction, int& triangle) const;
  /// Ids of the triangles Bullet reports for the box (its quantised AABB test: a superset of the exact set).
  void gather(const float* lo, const float* hi, std::vector<int>& ids) const;

 private:
  std::vector<float> m_vertices;
  std::vector<int> m_indices;
  std::unique_ptr<btTriangleIndexVertexArray> m_mesh;
  std::unique_ptr<btBvhTriangleMeshShape> m_shape;
  std::unique_ptr<btTriangleInfoMap> m_edge_info;  // the shape's edge info, which the shape does not own
  std::size_t m_bullet_bytes = 0;
};

}  // namespace vtp::tools
