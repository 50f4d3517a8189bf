#pragma once
// The layout Roblox published for its voxel terrain physics ("Loose kD tree"), kept as the profiler's reference row:
// binary loose kD nodes of 12 bytes (two float planes on one axis, a child or leaf index), leaves of at most 2
// triangles, rays walked near child first with a stack and tested one triangle at a time (Möller–Trumbore in float).
// Built from our kD build over our 16-bit mesh, so only the layout and the walk differ from ours.

#include <cstdint>
#include <memory>
#include <vector>

#include "vtp/physics/collider.h"
#include "vtp/physics/kd_build.h"

namespace vtp::tools {

class ReferenceKd {
 public:
  /// `collider` must have been built with 2-triangle leaves and `kd` be that build (ColliderBuilder::lastKd()).
  ReferenceKd(const physics::Collider& collider, const physics::KdBuild& kd);
  /// Nodes (12 bytes each) plus the 16-bit mesh. [Unit: byte]
  std::size_t bytes() const;
  /// Closest hit t along `ray` (prepared for the collider's chunk), or a negative value for none.
  float closestHit(const physics::ChunkRay& ray) const;

 private:
  struct Node {
    float left_max, right_min;  // planes along `axis` [Unit: grid]
    std::uint32_t bits;         // axis (2 bits) | leaf flag | left child index (branch) or leaf index (leaf)
  };
  static_assert(sizeof(Node) == 12);
  const physics::Collider& m_collider;
  std::vector<Node> m_nodes;
};

}  // namespace vtp::tools
