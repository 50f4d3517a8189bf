#pragma once
/// \file
/// The oracle for the mesher tests: a deliberately simple, scalar surface-nets mesher written from the rules stated in
/// vtp/mesher/surface_mesher.h (not from the fast implementation), which meshes any box of voxels with any owned
/// sub-box, in world fixed-point coordinates. Plus the mesh checks the mesher tests share (closedness, T-junctions,
/// areas, spill, signed volume) and the conversion of the fast mesher's output to the same form.

#include <array>
#include <compare>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "vtp/mesher/surface_mesher.h"
#include "vtp/terrain/coords.h"
#include "vtp/terrain/voxel.h"
#include "vtp/terrain/world.h"

namespace vtp::test {

/// Fixed-point units per voxel: the mesher's grid.
inline constexpr std::int32_t kScale = mesher::kPositionScale;

/// A point in world fixed point. [Unit: 1/1024 voxel]; voxel v's centre is at 1024 v + 512 on every axis.
using FixedPoint = std::array<std::int32_t, 3>;

/// One triangle in world fixed point, wound counter-clockwise seen from outside the solid, with its material.
struct MeshTriangle {
  std::array<FixedPoint, 3> v{};
  std::uint8_t material = 0;
  friend auto operator<=>(const MeshTriangle&, const MeshTriangle&) = default;
};

/// A dense box of voxels in world coordinates, x fastest, then y, then z (the readBox layout).
struct VoxelGrid {
  terrain::VoxelBox box;
  std::vector<terrain::Voxel> voxels;  ///< Exactly box.volume() voxels.

  /// The voxel at world coordinate v; throws std::out_of_range outside the box.
  terrain::Voxel at(terrain::VoxelCoord v) const;
  /// The voxel at v, or air outside the box.
  terrain::Voxel atOrAir(terrain::VoxelCoord v) const;
};

/// A grid of `box` filled with `fill`.
VoxelGrid makeGrid(const terrain::VoxelBox& box, terrain::Voxel fill = terrain::kAir);

/// Triangles of every active edge whose lower voxel `owns` accepts, for lower voxels in `bounds`. The 3^3
/// neighbourhood of every owned lower voxel must lie in grid.box (its edges' cells need it), else
/// std::invalid_argument. Triangles come in lower-voxel order (z, y, x) then axis x, y, z; `inside_voxels`, when
/// given, receives the inside voxel of each triangle's edge (parallel to the result).
std::vector<MeshTriangle> referenceMesh(const VoxelGrid& grid, const terrain::VoxelBox& bounds,
                                        const std::function<bool(terrain::VoxelCoord)>& owns,
                                        std::vector<terrain::VoxelCoord>* inside_voxels = nullptr);

/// The split rule on its own: quad v0 v1 v2 v3 (in winding order) as (v0,v1,v2),(v0,v2,v3) when
/// |v0-v2|^2 <= |v1-v3|^2, else (v1,v2,v3),(v1,v3,v0); the other split when the chosen one has a zero-area triangle.
std::array<std::array<FixedPoint, 3>, 2> splitQuad(const std::array<FixedPoint, 4>& q);

/// The triangles of every active edge whose lower voxel lies in `owned` ("mesh a region as one box").
std::vector<MeshTriangle> referenceMesh(const VoxelGrid& grid, const terrain::VoxelBox& owned,
                                        std::vector<terrain::VoxelCoord>* inside_voxels = nullptr);

/// The triangles of the edges whose lower voxel lies in `outer` but not in `inner` (the wide apron's extra triangles).
std::vector<MeshTriangle> referenceMeshRing(const VoxelGrid& grid, const terrain::VoxelBox& outer,
                                            const terrain::VoxelBox& inner);

// --- Comparing meshes -------------------------------------------------------------------------------------------

/// The same triangle rotated so its smallest vertex (x, then y, then z) comes first; winding is kept.
MeshTriangle canonical(const MeshTriangle& t);
/// Every triangle canonicalised, then sorted: two meshes are equal as multisets when these are equal.
std::vector<MeshTriangle> canonicalSorted(std::vector<MeshTriangle> triangles);
/// Triangles that occur more than once (after canonicalisation), counted with multiplicity minus one.
std::size_t duplicateCount(const std::vector<MeshTriangle>& triangles);

/// Triangles [first, last) of a fast-mesher result for chunk `chunk`, in world fixed point.
std::vector<MeshTriangle> worldTriangles(const mesher::ChunkMesh& mesh, terrain::ChunkCoord chunk, int first, int last);

/// The box a chunk is meshed from: the chunk plus `apron` voxels on every side.
terrain::VoxelBox apronBox(terrain::ChunkCoord chunk, int apron);
/// The part of `grid` over `box` (which must lie inside grid.box).
VoxelGrid subGrid(const VoxelGrid& grid, const terrain::VoxelBox& box);
/// `box` read from a world; throws std::runtime_error when readBox fails.
VoxelGrid readGrid(const terrain::World& world, const terrain::VoxelBox& box);

/// What the fast mesher made of one chunk, in world fixed point.
struct FastChunk {
  std::vector<MeshTriangle> owned;       ///< Triangles [0, owned_triangle_count).
  std::vector<MeshTriangle> neighbours;  ///< Triangles [owned_triangle_count, triangle_count) (wide apron only).
};
/// Meshes `chunk` with the fast mesher from the voxels of `grid` (which must contain apronBox(chunk, apron)); throws
/// std::runtime_error when mesh() fails or its returned count disagrees with `out`.
FastChunk fastMeshChunk(mesher::SurfaceMesher& mesher, mesher::ChunkMesh& out, const VoxelGrid& grid,
                        terrain::ChunkCoord chunk, int apron);

/// A readable one-line form of a triangle for failure messages.
std::string describe(const MeshTriangle& t);

// --- Mesh properties --------------------------------------------------------------------------------------------

/// (v1 - v0) x (v2 - v0), exact. [Unit: (1/1024 voxel)^2]; its length is twice the area.
std::array<std::int64_t, 3> crossProduct(const MeshTriangle& t);
/// Area in voxel^2 (from the exact cross product).
double areaVoxels(const MeshTriangle& t);

/// What the directed-edge census of a mesh found.
struct EdgeCensus {
  std::size_t checked_edges = 0;  ///< Undirected edges examined.
  std::size_t unmatched = 0;      ///< Undirected edges where count(a->b) != count(b->a).
  std::size_t non_manifold = 0;   ///< Undirected edges used by more than two triangles.
  std::size_t boundary = 0;       ///< Undirected edges used by exactly one triangle.
};
/// Counts every directed edge by exact vertex positions and compares it with its reverse. Only edges with at least one
/// end for which `interior` holds are examined (all when `interior` is empty).
EdgeCensus edgeCensus(const std::vector<MeshTriangle>& triangles,
                      const std::function<bool(const FixedPoint&)>& interior = {});

/// Edges that have another vertex of the mesh strictly inside them (T-junctions). Uses that every surface-nets vertex
/// lies strictly inside its cell, so a vertex on an edge lies in a cell the edge's bounding box touches.
std::size_t tJunctionCount(const std::vector<MeshTriangle>& triangles);

/// Cells (named by lowest voxel) that received two different vertex positions: 0 when every vertex is shared.
std::size_t inconsistentCellCount(const std::vector<MeshTriangle>& triangles);

/// Six times the signed volume enclosed by a closed mesh. [Unit: (1/1024 voxel)^3]; positive when normals point out.
/// Computed relative to the first vertex, so it stays exact for meshes a few hundred voxels across.
std::int64_t signedVolume6(const std::vector<MeshTriangle>& triangles);

/// True when all three vertices lie within [1024 (v-1), 1024 (v+2)] on every axis of one solid-inside voxel v of `grid`
/// (so the whole triangle lies in that voxel's 3^3 neighbourhood).
bool withinSolidNeighbourhood(const MeshTriangle& t, const VoxelGrid& grid);

/// Heights (fixed point) where the vertical line through (x, z) meets the triangles, edges and corners included.
std::vector<double> verticalHits(const std::vector<MeshTriangle>& triangles, std::int32_t x, std::int32_t z);

}  // namespace vtp::test
