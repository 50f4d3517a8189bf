#pragma once
// Edge flags: which triangle edges are sharp convex edges (active), where a contact may take the edge's direction as
// its normal. Flat and concave edges, and edges between triangles bending by less than kFlatEdgeAngle, are inactive:
// a body sliding over them gets the face normal instead (the internal-edge problem of triangle-mesh terrain). An
// edge whose neighbour is not in the mesh, or that more than two triangles share, is active (the safe answer).
//
// Two ways to find an edge's neighbour, with the same answers:
//   - the quad path, for the mesher's output (surface_mesher.h): every vertex lies in its own cell, triangles come in
//     pairs (a, b, c), (a, c, d) from one quad, so a quad's diagonal is shared by its two triangles only, and its four
//     outer edges join face-adjacent cells. An outer half-edge is then named by its start cell and one of 6
//     directions, and its twin is one table load: no sort, no search;
//   - the general path, for any other mesh: half-edges sorted by start vertex, the twin searched among them.
#include <cstdint>
#include <span>
#include <vector>

#include "vtp/mesher/surface_mesher.h"

namespace vtp::physics {

/// Convex edges bending by less than this are treated as flat. [Unit: radian] (10 degrees: gently curved terrain, the
/// smooth mesher's facets on a hill, keeps face normals)
inline constexpr double kFlatEdgeAngle = 0.17453292519943295;

/// Work arrays of computeEdgeFlags, reused between calls (about 100 KiB; the quad path's tables are all zero between
/// calls, each call clearing what it wrote). One per thread.
struct EdgeFlagScratch {
  EdgeFlagScratch();
  std::vector<double> normals;  // x, y, z and the squared length per triangle
  // General path.
  std::vector<std::uint32_t> starts, half_edges;
  // Quad path: per cell and direction, the count of outer half-edges leaving the cell that way << 16 | the last one;
  // per cell, whether a vertex lies in it; per cell and axis, whether a quad lies on the unit square of cells from it
  // across that axis; per vertex, its cell (coordinates packed 4 bits apart); per quad, the table entries of its outer
  // half-edges and its square.
  std::vector<std::uint32_t> outer_edges;
  std::vector<std::uint8_t> cell_used, square_used;
  std::vector<std::uint16_t> vertex_cell, written, squares;
};

/// Bit k of flags[t] for t < mesh.owned_triangle_count: edge k of triangle t (corner k to corner k + 1) is active.
/// Neighbours are searched among all of the mesh's triangles (with the wide apron, the neighbouring chunks' too, so
/// edges on chunk seams are classified like any other). Takes the quad path when the mesh has the mesher's structure.
void computeEdgeFlags(const mesher::ChunkMesh& mesh, std::span<std::uint8_t> flags, EdgeFlagScratch& scratch);

/// The quad path alone: false, with `flags` unspecified, when the mesh lacks the structure it relies on (or `flags`
/// holds fewer than owned_triangle_count entries). For tests; computeEdgeFlags picks the path.
bool quadEdgeFlags(const mesher::ChunkMesh& mesh, std::span<std::uint8_t> flags, EdgeFlagScratch& scratch);

/// The general path alone. For tests; computeEdgeFlags picks the path.
void generalEdgeFlags(const mesher::ChunkMesh& mesh, std::span<std::uint8_t> flags, EdgeFlagScratch& scratch);

}  // namespace vtp::physics
