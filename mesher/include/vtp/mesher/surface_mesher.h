#pragma once
/// \file
/// The smooth mesher: the solid surface of one chunk as triangles, from a dense voxel box of the chunk plus an apron.
///
/// Algorithm: surface nets (S. Gibson, "Constrained Elastic Surface Nets", MERL TR99-24, 1998; the dual method
/// popularised by Mikola Lysenko's "Smooth Voxel Terrain" notes), with vertex positions from occupancy computed
/// exactly (rational crossings, one rounding per vertex), so neighbouring chunks agree bit for bit. The rules, which the reference mesher in the tests
/// implements independently:
///
/// - **Inside.** A voxel is inside when terrain::isSolidInside (solid material, occupancy >= 128); water and air are
///   outside. Its weight is e = occupancy when its material is solid, else 0.
/// - **Edges.** An edge joins the centres of two voxels adjacent along x, y or z. It is *active* when exactly one end is
///   inside. A chunk **owns** the edges whose lower end (smaller coordinate along the edge) is a voxel of the chunk, so
///   every edge of the world belongs to exactly one chunk; a chunk that stores only air can own triangles (the edges
///   from its voxels up into a solid neighbour above).
/// - **Crossing.** On an active edge, the surface crosses at distance t from the inside end's centre towards the
///   outside end (0 < t < 1). When either end is saturated (inside weight e_in = 255, or outside weight e_out = 0),
///   t = (e_in + e_out - 127.5) / 255 voxel, exactly: a column of solid voxels below y = h, voxel h at occupancy q and
///   air above crosses at height h + q / 255. When both ends are partly filled (e_in in 128..254, e_out in 1..127: a
///   solid), the occupancy is read as a field sampled at the voxel centres and t is where it interpolates linearly to
///   127.5: t = (e_in - 127.5) / (e_in - e_out) voxel, in 1/256 voxel rounded to nearest (no ties occur), then in
///   1..255. The two agree on columns and both are exact for a plane written as clamped linear occupancies, so a gentle
///   slope written column by column meshes flat (data/bench/slope_facets.py measures how flat).
/// - **Cells and vertices.** A cell is the cube between 8 voxel centres, named by its lowest voxel. Its vertex is the
///   mean of the crossings on its active edges: per axis, the mean of the crossing coordinates (relative to the centre
///   of the cell's lowest voxel, so each is in 0..1 voxel), in 1/1024 voxel rounded down, then clamped to 1..1023.
///   The crossings are exact rationals (multiples of 1/65280 voxel), so the mean is exact before its one rounding.
///   Vertices of different cells therefore never coincide. (A 1/256 grid, or rounding each crossing first, tilts the
///   facets of a 15 degree slope enough to bump a rolling ball; see the slope model.)
/// - **Quads.** Each owned active edge gives one quad joining the vertices of the 4 cells around it, wound so the
///   normal points from the inside end to the outside end (out of the solid). With the edge along axis a and (b, c) the
///   next two axes cyclically (x: y,z; y: z,x; z: x,y), the cells around the edge at lower voxel p are, as offsets of
///   (b, c) from p: (-1,-1), (0,-1), (0,0), (-1,0); this order (v0, v1, v2, v3) is counter-clockwise seen from +a, so it
///   is used as is when the lower end is inside and reversed to (v0, v3, v2, v1) when the upper end is inside.
/// - **Split.** A quad v0 v1 v2 v3 becomes triangles (v0,v1,v2),(v0,v2,v3) when |v0 - v2|^2 <= |v1 - v3|^2, else
///   (v1,v2,v3),(v1,v3,v0) (squared lengths in exact integers). If the chosen split has a triangle with zero area (exact
///   integer cross product), the other split is used. Each triangle gets the material of the quad's inside voxel.
/// - **Spill.** Every triangle lies within the 3^3 voxels around the inside voxel of its edge.
///
/// Output order is deterministic (the same box always gives the same bytes): owned quads first, then (wide apron)
/// the neighbours'; within each, by edge axis (x, y, z), then by lower voxel in box order; vertices in box order of
/// their cells.

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "vtp/terrain/status.h"
#include "vtp/terrain/voxel.h"

namespace vtp::mesher {

/// Voxels per chunk side (terrain's chunk size).
inline constexpr int kChunkSize = 8;
/// The default input: chunk + 1 voxel on every side, 10^3 voxels.
inline constexpr int kApron = 1;
/// The edge-flag input: chunk + 2 voxels on every side, 12^3 voxels; adds the neighbours' triangles within one voxel
/// of the chunk (see ChunkMesh::owned_triangle_count).
inline constexpr int kWideApron = 2;
/// Fixed-point units per voxel of vertex positions.
inline constexpr int kPositionScale = 1024;

/// Side of the input box for an apron. [Unit: voxel]
constexpr int boxSide(int apron) { return kChunkSize + 2 * apron; }
/// Voxels in the input box for an apron.
constexpr int boxVolume(int apron) { return boxSide(apron) * boxSide(apron) * boxSide(apron); }

/// One vertex. [Unit: 1/1024 voxel], relative to the chunk origin (the lower corner of the chunk's voxel (0,0,0)), so
/// voxel v's centre is at 1024 v + 512. Range -1535..9727 on every axis (the cells of a 12^3 box).
struct Vertex {
  std::int16_t x = 0, y = 0, z = 0;
  std::int16_t pad = 0;  ///< Always 0: a vertex is one aligned 8-byte load for the mesher and the narrowphase.
  friend constexpr bool operator==(const Vertex&, const Vertex&) = default;
};
static_assert(sizeof(Vertex) == 8);
/// The range of a vertex coordinate (Vertex). [Unit: 1/1024 voxel]
inline constexpr int kMinPosition = -1535, kMaxPosition = 9727;

/// The most triangles a 10^3 box can produce (2 per owned edge) and a 12^3 box (2 per edge with its lower end in the
/// chunk's 10^3 neighbourhood).
inline constexpr int kMaxTriangles = 2 * 3 * kChunkSize * kChunkSize * kChunkSize;
inline constexpr int kMaxWideTriangles = 2 * 3 * 10 * 10 * 10;
/// The most vertices: one per cell of the box.
inline constexpr int kMaxVertices = 9 * 9 * 9;
inline constexpr int kMaxWideVertices = 11 * 11 * 11;

/// A chunk's triangles, in caller-owned buffers reused across calls: sized once at construction for the largest
/// possible output, never reallocated by the mesher. Triangle i is indices[3i..3i+2] with material materials[i].
struct ChunkMesh {
  ChunkMesh();
  std::vector<Vertex> vertices;          ///< [0, vertex_count) valid.
  std::vector<std::uint16_t> indices;    ///< [0, 3 triangle_count) valid (the buffer has a few entries of slack).
  std::vector<std::uint8_t> materials;   ///< [0, triangle_count) valid: the material of the triangle's solid voxel.
  int vertex_count = 0;
  int triangle_count = 0;
  /// Triangles [0, owned_triangle_count) are the chunk's own; with the wide apron the rest, up to triangle_count,
  /// belong to neighbouring chunks (edges whose lower voxel is within one voxel outside the chunk).
  int owned_triangle_count = 0;
};

/// Meshes chunks. Holds reusable scratch memory (a few KiB); no allocation after construction.
/// Thread-safety: one SurfaceMesher per thread; distinct instances are independent.
/// CPU: compiled for x86-64-v3 like the rest of the library; check vtp::cpuSupported() (World::create does) before
/// using it on an unknown machine.
class SurfaceMesher {
 public:
  SurfaceMesher();
  ~SurfaceMesher();
  SurfaceMesher(const SurfaceMesher&) = delete;
  SurfaceMesher& operator=(const SurfaceMesher&) = delete;

  /// Meshes the chunk at the centre of `box`: boxVolume(apron) voxels in terrain::World::readBox layout (x fastest,
  /// then y, then z), box voxel (apron, apron, apron) being chunk voxel (0,0,0). `apron` is kApron or kWideApron.
  /// Fills `out` and returns its triangle count. Errors (kInvalidArgument, `out` left empty): another apron, a box of
  /// the wrong size. Voxels need not be canonical; only the inside predicate and the weights above are used.
  Result<int> mesh(std::span<const terrain::Voxel> box, int apron, ChunkMesh& out);

 private:
  struct Scratch;
  std::unique_ptr<Scratch> m_scratch;
};

}  // namespace vtp::mesher
