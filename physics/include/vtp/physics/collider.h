#pragma once
/// \file
/// A chunk collider: the chunk's own collision triangles (the mesher's output, lossless on its 1/1024-voxel grid) with
/// a query structure, self-contained and immutable once built, so any number of threads may query it at once.
///
/// Layout (one allocation, sizes in bytes per triangle on the default world in data/bench/):
///   - vertices: int16 x, y, z on the mesher's grid (1/1024 voxel, relative to the chunk origin), 6 bytes each;
///   - triangles: three u16 arrays of corner offsets into the positions (3 x the vertex index, so a corner is one
///     load with no multiply; structure of arrays, 8 triangles per SIMD load); bit 15 of corner k's offset is the edge
///     flag of edge k (vertex k to vertex k+1), free because a chunk has at most 729 vertices (offsets below 2,187);
///   - one material byte per triangle;
///   - leaves: triangles are ordered by leaf (runs of at most kLeafTriangles), and the leaves' int16 bounding boxes are
///     stored 8 to a group as structure of arrays, so one AVX2 step tests a ray or a box against 8 leaves.
/// The leaves come from a loose kD build (collider_builder.h); the tree itself is not kept: a flat SIMD scan of ~25
/// leaf boxes beat binary descent on this machine kind (the "flat" layout won overall when measured;
/// tools/profile reports both).
///
/// Rays are watertight: the triangle test is Woop, Benthin and Wald, "Watertight Ray/Triangle Intersection" (JCGT
/// 2013), run in the grid frame. Every chunk a world ray visits must see the same ray, bit for bit, so the origin is
/// translated into the chunk's frame in double and split there into an integer part and a float fraction: vertex minus
/// origin is then (vertex - integer part), exact, minus the fraction, rounded once — the same float for a seam vertex
/// seen from either chunk. A ray through a shared edge or vertex hits at least one of the triangles around it.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "vtp/mesher/surface_mesher.h"
#include "vtp/physics/world_vec.h"
#include "vtp/terrain/coords.h"
#include "vtp/terrain/status.h"

namespace vtp::physics {

/// Grid units per voxel of collider positions (the mesher's fixed point).
inline constexpr int kGridScale = mesher::kPositionScale;
/// The most triangles in one leaf of the flat structure.
inline constexpr int kLeafTriangles = 8;
/// Leaf boxes per SIMD group.
inline constexpr int kLeafGroup = 8;
/// Triangles per SIMD block of the query kernels.
inline constexpr int kTriangleBlock = 8;
/// Zero entries after the last corner array, so a block of kTriangleBlock triangles may start at any triangle.
inline constexpr int kCornerPadding = kTriangleBlock - 1;

/// What a collider is built for. Contacts need the edge flags (src/collider/edge_flags.h), which take about half of a
/// build (data/bench/README.md); rays and box gathers never read them, so a collider for those alone skips them, as
/// Bullet's btBvhTriangleMeshShape leaves its edge information to a separate step (btGenerateInternalEdgeInfo).
enum class ColliderUse : std::uint8_t {
  kQueries,   ///< Rays and box gathers: every triangle's edge flags are 0 and Collider::hasEdgeFlags() is false.
  kContacts,  ///< Contacts as well: the edge flags computed.
};
/// Whether a collider with (or without) edge flags serves `use`: any serves rays and box gathers, one with edge flags
/// contacts too.
constexpr bool servesUse(bool has_edge_flags, ColliderUse use) noexcept {
  return use == ColliderUse::kQueries || has_edge_flags;
}

/// A segment origin + t * direction, t in [0, max_t]. [Unit: world]; direction need not be normalised.
struct Ray {
  WorldVec3 origin;
  WorldVec3 direction;
  double max_t = 1.0;
};

/// A ray prepared for one chunk (prepareRay). Plain data; cheap to copy.
struct ChunkRay {
  std::array<std::int32_t, 3> origin_int{};  ///< Integer part of the origin in the chunk's grid frame.
  std::array<float, 3> origin_frac{};        ///< The rest, in [0, 1) (the same in every chunk).
  std::array<float, 3> direction{};          ///< Over its largest |component| (now +-1); s counts grid units along it.
  std::array<float, 3> inv_direction{};      ///< 1 / direction (a huge finite value for 0).
  std::array<std::int16_t, 3> segment_min{}, segment_max{};  ///< Grid bounds of the segment, grown by 2, clamped.
  int kz = 2;  ///< The direction's largest axis (Woop's z; x and y are the next two axes cyclically).
  std::uint8_t zero_axes = 0;  ///< Bit a set when direction[a] is 0.
  float shear_x = 0, shear_y = 0, shear_z = 0;
  float max_t = 0;       ///< The segment's end in s. [Unit: grid]
  double t_per_s = 1;    ///< The caller's t per unit of s.
  Ray world;             ///< The ray as given, for hit points in world units.
  double voxel_size = 1;
};

/// A hit of a ray on a triangle.
struct RayHit {
  double t = 0;                     ///< Along the world ray (Ray::direction units).
  WorldVec3 point;                  ///< origin + t * direction. [Unit: world]
  std::array<float, 3> normal{};    ///< Unit normal of the triangle, out of the solid.
  int triangle = -1;                ///< Collider triangle id.
  std::uint8_t material = 0;
  bool front_face = false;          ///< The ray enters the solid here (direction against the normal).
};

/// A closed box on a chunk's grid. [Unit: 1/1024 voxel (1 / kGridScale), relative to the chunk origin]
struct GridBox {
  std::array<std::int32_t, 3> min{}, max{};
};

/// One triangle as stored.
struct ColliderTriangle {
  std::array<mesher::Vertex, 3> vertices;
  std::uint8_t material = 0;
  std::uint8_t edge_flags = 0;  ///< Bit k: edge k (vertex k to k+1) is a sharp convex edge (edge_flags.h).
};

/// Whether physics answers for chunk `c`: its voxels lie within 2^16 voxels of the origin, give or take one chunk
/// (physics/README.md, Query rules: single-precision contact maths loses a voxel's precision beyond).
bool chunkInPhysicsRange(terrain::ChunkCoord c) noexcept;

/// `ray` prepared for chunk `chunk` of a world with `voxel_size` world units per voxel. Errors (kInvalidArgument): a
/// non-finite component, max_t < 0 or non-finite, a zero direction or one whose largest component is below about
/// 5e-312 x voxel_size (t would not be finite in the caller's units); (kOutOfRange) an origin or end point at or
/// beyond 2^16 voxels from the world origin (physics answers within that range, physics/README.md).
/// Writes into `out` (no allocation; `out` is unspecified after an error).
Status prepareRay(const Ray& ray, terrain::ChunkCoord chunk, double voxel_size, ChunkRay& out);
/// The same, returning the prepared ray.
inline Result<ChunkRay> prepareRay(const Ray& ray, terrain::ChunkCoord chunk, double voxel_size) {
  ChunkRay r;
  if (Status s = prepareRay(ray, chunk, voxel_size, r); !s) return s.error();
  return r;
}

/// The grid box of the world-space box [min, max] in chunk `chunk`: the grid points inside it, so a triangle whose
/// integer bounds overlap the GridBox overlaps the world box and conversely. Errors as MaskIndex::query's; `out` is
/// unspecified after an error.
Status gridBoxOf(const std::array<double, 3>& min, const std::array<double, 3>& max, terrain::ChunkCoord chunk,
                 double voxel_size, GridBox& out);
/// The same, returning the box.
inline Result<GridBox> gridBoxOf(const std::array<double, 3>& min, const std::array<double, 3>& max,
                                 terrain::ChunkCoord chunk, double voxel_size) {
  GridBox g;
  if (Status s = gridBoxOf(min, max, chunk, voxel_size, g); !s) return s.error();
  return g;
}

class Collider {
 public:
  Collider(const Collider&) = delete;
  Collider& operator=(const Collider&) = delete;
  ~Collider();

  terrain::ChunkCoord chunk() const noexcept { return m_chunk; }
  int triangleCount() const noexcept { return m_triangles; }
  int vertexCount() const noexcept { return m_vertices; }
  int leafCount() const noexcept { return m_leaves; }
  /// Everything this collider owns, its own object included. [Unit: byte]
  std::size_t bytes() const noexcept { return sizeof(Collider) + m_allocation_bytes; }
  /// Bounds of all triangles (empty collider: min > max). [Unit: grid]
  GridBox bounds() const noexcept;
  /// Bounds of leaf `leaf` and its triangle range [first, last).
  GridBox leafBounds(int leaf) const noexcept;
  std::array<int, 2> leafTriangles(int leaf) const noexcept;
  ColliderTriangle triangle(int id) const noexcept;
  /// Whether the edge flags were computed (built for ColliderUse::kContacts); else every triangle's are 0.
  bool hasEdgeFlags() const noexcept { return m_has_edge_flags; }
  /// Whether this collider serves `use` (servesUse).
  bool serves(ColliderUse use) const noexcept { return servesUse(m_has_edge_flags, use); }

  /// The closest hit with t in [0, ray.max_t], if any. A ray starting inside solid hits the surface it leaves.
  bool closestHit(const ChunkRay& ray, RayHit& hit) const noexcept;
  /// Whether the ray hits any triangle with t in [0, max_t].
  bool anyHit(const ChunkRay& ray) const noexcept;
  /// Every hit with t in [0, max_t], sorted by t, into `out`; returns how many there are (only the first
  /// out.size() are written). A ray through a shared edge can hit both triangles at the same t. Stack: about 26 KiB
  /// (every hit, sorted; measured with -fstack-usage, g++ 12); the other queries about 2 KiB at most.
  int allHits(const ChunkRay& ray, std::span<RayHit> out) const noexcept;
  /// Ids of the triangles whose integer bounds overlap `box`, in increasing order, into `ids`; with `vertices`
  /// (3 per id, [Unit: world units relative to the chunk origin]) also their positions. Returns how many overlap
  /// (only the first ids.size() are written, and the vertices of those whose 3 entries fit in `vertices`; entries of
  /// either past the returned count may be overwritten, up to 8 ids and 24 vertices further, but nothing past either
  /// span). An empty box (min > max on an axis) gathers nothing; a box past the int16 grid is clamped to it, which
  /// changes no answer.
  int gather(const GridBox& box, std::span<std::uint16_t> ids, std::span<std::array<float, 3>> vertices = {},
             double voxel_size = 1.0) const noexcept;

  /// Walks the packed layout and checks what the queries count on; the error (kCorrupt) names the first broken
  /// invariant: the sections where the counts put them in an allocation of bytes() - sizeof(Collider); every triangle
  /// in exactly one leaf's range; each leaf's box holding its triangles' bounds, the unused lanes of the last group
  /// empty boxes; corner offsets naming stored vertices (every vertex used), the padding after them zero, no edge flag
  /// without hasEdgeFlags(); vertices within the mesher's range; bounds() the triangles' bounds. O(size), for tests.
  Status validate() const;

 private:
  friend class ColliderBuilder;
  friend struct ColliderTestAccess;  // tests/physics/collider_validate_test.cpp corrupts a collider for validate()
  Collider() = default;
  template <class Visit>
  void castRay(const ChunkRay& ray, Visit&& visit) const noexcept;
  template <class Visit>
  void castRayScan(const ChunkRay& ray, Visit& visit) const noexcept;
  RayHit makeHit(const ChunkRay& ray, int id, float t) const noexcept;

  // The sections of m_data, in this order (each 2-byte aligned; the boxes first, 16-byte aligned). The object is
  // kept small: it is part of every cached chunk's cost.
  const std::int16_t* boxes() const noexcept { return reinterpret_cast<const std::int16_t*>(m_data.get()); }
  // Where the leaf starts, positions and corners begin, in 2-byte entries from m_data (m_sections, set by the builder
  // from the counts): a query finds its sections with no arithmetic on the counts.
  const std::uint16_t* leafStart() const noexcept {
    return reinterpret_cast<const std::uint16_t*>(m_data.get()) + m_sections[0];
  }
  const std::int16_t* positions() const noexcept {
    return reinterpret_cast<const std::int16_t*>(m_data.get()) + m_sections[1];
  }
  const std::uint16_t* corner(int k) const noexcept {
    return reinterpret_cast<const std::uint16_t*>(m_data.get()) + m_sections[2] + std::size_t(k) * m_triangles;
  }
  // kCornerPadding zero entries follow the last corner array, so the SIMD kernels read 8 triangles' corners at any
  // start without clamping (lanes past a leaf's end read the next triangles' corners or vertex 0, and are masked).
  const std::uint8_t* materials() const noexcept {
    return reinterpret_cast<const std::uint8_t*>(corner(3) + kCornerPadding);
  }
  int groupCount() const noexcept { return (m_leaves + kLeafGroup - 1) / kLeafGroup; }

  std::unique_ptr<std::byte[]> m_data;
  std::array<std::int16_t, 6> m_bounds{};  // min x, y, z, max x, y, z
  terrain::ChunkCoord m_chunk{};
  std::uint32_t m_allocation_bytes = 0;
  std::uint16_t m_triangles = 0, m_vertices = 0, m_leaves = 0;
  std::uint8_t m_flat_axes = 0;  // bit a set when every triangle lies in one plane across axis a (m_bounds)
  bool m_has_edge_flags = false;
  std::array<std::uint32_t, 3> m_sections{};  // leaf starts, positions, corners: 2-byte entries from m_data
};

}  // namespace vtp::physics
