#pragma once
/// \file
/// Builds chunk colliders (collider.h) from the mesher's output: the loose kD build (kd_build.h) clusters the
/// triangles into leaves, then everything is packed into the collider's single allocation.

#include <memory>
#include <vector>

#include "vtp/mesher/surface_mesher.h"
#include "vtp/physics/collider.h"
#include "vtp/physics/kd_build.h"
#include "vtp/terrain/coords.h"
#include "vtp/terrain/status.h"

namespace vtp::physics {

struct EdgeFlagScratch;

/// Thread-safety: one builder per thread (it holds scratch buffers, grown once to the largest chunk).
class ColliderBuilder {
 public:
  /// `leaf_triangles` is the flat structure's leaf size (kLeafTriangles by default).
  explicit ColliderBuilder(KdBuildOptions options = {kLeafTriangles, 32});
  ~ColliderBuilder();
  ColliderBuilder(const ColliderBuilder&) = delete;
  ColliderBuilder& operator=(const ColliderBuilder&) = delete;

  /// The collider of chunk `chunk` from the chunk's own triangles of `mesh` (the first owned_triangle_count; with the
  /// wide apron the neighbours' triangles are left out, but serve as the neighbours of seam edges when the edge flags
  /// are computed: bit k of a triangle's flags marks edge k a sharp convex edge, see src/collider/edge_flags.h). Unused
  /// vertices are dropped, the rest keep their order.
  /// With ColliderUse::kQueries the edge flags are not computed (all 0; the neighbours' triangles are then not needed,
  /// and the mesh of the chunk's 10^3 box gives the same collider otherwise).
  /// Errors (kInvalidArgument): counts beyond the mesh's buffers or its kind (kMaxWideTriangles), an index past
  /// vertex_count, an owned triangle's vertex outside the mesher's range (kMinPosition..kMaxPosition).
  Result<std::unique_ptr<Collider>> build(const mesher::ChunkMesh& mesh, terrain::ChunkCoord chunk,
                                          ColliderUse use = ColliderUse::kContacts);

  /// The kD build of the last build() call (for the profiler's reference layout).
  const KdBuild& lastKd() const noexcept { return m_kd; }

 private:
  KdBuildOptions m_options;
  KdBuild m_kd;
  KdScratch m_kd_scratch;
  std::vector<TriangleBounds> m_bounds;
  std::vector<std::int32_t> m_remap;  // per mesh vertex: its offset in the positions (3 x its new number), or -1
  std::vector<std::uint8_t> m_edge_flags;
  std::unique_ptr<EdgeFlagScratch> m_edge_scratch;
};

}  // namespace vtp::physics
