#pragma once
// Edge flags: which triangle edges are sharp convex edges (active), where a contact may take the edge's direction as
// its normal. Flat and concave edges, and edges between triangles bending by less than kFlatEdgeAngle, are inactive:
// a body sliding over them gets the face normal instead (the internal-edge problem of triangle-mesh terrain). An
// edge whose neighbour is not in the mesh, or that more than two triangles share, is active (the safe answer).
#include <cstdint>
#include <span>
#include <vector>

#include "vtp/mesher/surface_mesher.h"

namespace vtp::physics {

/// Convex edges bending by less than this are treated as flat. [Unit: radian] (10 degrees: gently curved terrain, the
/// smooth mesher's facets on a hill, keeps face normals)
inline constexpr double kFlatEdgeAngle = 0.17453292519943295;

/// An integer vector (triangle normals on the mesher's grid).
struct V64 {
  std::int64_t x, y, z;
};

/// Work arrays of computeEdgeFlags, reused between calls.
struct EdgeFlagScratch {
  std::vector<std::uint32_t> starts, half_edges;
  std::vector<V64> normals;
};

/// Bit k of flags[t] for t < mesh.owned_triangle_count: edge k of triangle t (corner k to corner k + 1) is active.
/// Neighbours are searched among all of the mesh's triangles (with the wide apron, the neighbouring chunks' too, so
/// edges on chunk seams are classified like any other).
void computeEdgeFlags(const mesher::ChunkMesh& mesh, std::span<std::uint8_t> flags, EdgeFlagScratch& scratch);

}  // namespace vtp::physics
