#pragma once
// A shape against one chunk's collider: the triangles its box overlaps (Collider::gather), one contact per triangle
// (triangle_contact.h), and the reduction to the at most four points a manifold keeps.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "contact/triangle_contact.h"
#include "vtp/physics/collider.h"
#include "vtp/terrain/coords.h"

namespace vtp::physics {

/// The most points one body-chunk manifold keeps.
inline constexpr int kManifoldPoints = 4;

/// A triangle contact in a chunk's frame with the triangle it came from.
struct ChunkContact {
  TriangleContact contact;
  int triangle = -1;
  std::uint8_t material = 0;
};

/// Work arrays for one query; reuse one per thread.
struct ContactScratch {
  std::vector<std::uint16_t> ids;
  std::vector<std::array<float, 3>> vertices;
  std::vector<ChunkContact> contacts;
  std::vector<btVector3> core_points;  // a convex hull's points in the chunk's frame
};

/// Counters a contact query adds to.
struct ContactCounters {
  unsigned long long gjk_calls = 0;
  unsigned long long triangles = 0;  ///< Triangles tested.
  unsigned long long colliders_built = 0;  ///< Colliders the search built (cache misses: ColliderCache::Pin::built).
};

/// The origin of `chunk` in world units.
std::array<double, 3> chunkOriginWorld(terrain::ChunkCoord chunk, double voxel_size);

/// World bounds of `shape` with local frame `basis` at world `position`, margin included, grown by `grow` on every
/// side. [Unit: world units]
void shapeBounds(const btConvexShape& shape, const btMatrix3x3& basis, const std::array<double, 3>& position,
                 double grow, std::array<double, 3>& min, std::array<double, 3>& max);
/// The same for `shape` at Bullet pose `pose` (world units).
inline void shapeBounds(const btConvexShape& shape, const btTransform& pose, double grow, std::array<double, 3>& min,
                        std::array<double, 3>& max) {
  const btVector3& o = pose.getOrigin();
  shapeBounds(shape, pose.getBasis(), {double(o.x()), double(o.y()), double(o.z())}, grow, min, max);
}

/// Whether no triangle `chunk` owns can come within `threshold` of `shape` (local frame `basis` at world `position`):
/// the chunk's triangles lie in its box grown by the mesher's one-voxel spill, and the shape's core (a sphere's centre,
/// a capsule's segment, else the centre of its bounding box) lies farther from that box than the shape's reach from
/// its core plus the threshold. A rejection only (never true where a contact could be), so a body larger than a few
/// chunks searches only the chunks its surface reaches, not every chunk of its box.
bool chunkBeyondReach(const btConvexShape& shape, const btMatrix3x3& basis, const std::array<double, 3>& position,
                      terrain::ChunkCoord chunk, double voxel_size, double threshold);

/// `shape` (a btConvexShape with its local frame `basis` at world position `position`) placed in `chunk`'s frame,
/// with the specialised sphere and capsule data filled in.
ShapeInChunk placeInChunk(const btConvexShape& shape, const btMatrix3x3& basis, const std::array<double, 3>& position,
                          terrain::ChunkCoord chunk, double voxel_size);

/// The triangles of `collider` whose bounds meet the world box [min, max]: their ids and vertices ([Unit: world units
/// relative to the chunk origin]) into scratch.ids and scratch.vertices, grown as needed. Returns how many; 0 for a
/// box gridBoxOf refuses.
int gatherTriangles(const Collider& collider, const std::array<double, 3>& min, const std::array<double, 3>& max,
                    double voxel_size, ContactScratch& scratch);

/// One-sided terrain: a triangle's back faces the inside of the solid. A contact `c` whose normal points into the
/// solid (a body sunk so far through the face that its least overlap is further in) takes the face normal and the
/// depth the shape reaches behind the face's plane when the shape's centre lies over the face (projects inside the
/// triangle); elsewhere (a body in front of a neighbouring face but behind this one's extended plane, past a ridge) it
/// is dropped, since the neighbour's contact holds the body. A contact from behind that does not penetrate is dropped
/// too. Returns false when dropped; other contacts are left as they are.
bool faceFront(const btVector3 t[3], const ShapeInChunk& shape, TriangleContact& c);

/// A contact `c` with triangle `t` that lies on its flat or concave edges only (edge flags clear: edge_flags.h), or
/// on a corner between such edges, takes the face normal: a body sliding or rolling across the terrain's internal
/// edges meets no ghost bumps. The distance is kept; the point moves to where the shape's core point behind the
/// contact, rounded by ShapeInChunk::radius, faces the face (a cylinder's: the rim of its disk through the contact), so
/// a rolling body's contact sits under its axis, where the body does not move towards the face. Contacts inside the
/// face or on a sharp convex edge are left as they are.
void correctInternalEdge(const btVector3 t[3], unsigned flags, const ShapeInChunk& shape, TriangleContact& c);

/// Every triangle contact closer than `threshold` between `shape` and the triangles of `collider` overlapping the
/// world box [min, max] (the shape's bounds grown by the threshold), into scratch.contacts (cleared first), with
/// internal edges corrected when `correct_edges` (the raw contacts are what GJK/EPA reports) and contacts from behind
/// a face turned or dropped by faceFront when `one_sided`.
void chunkContacts(const Collider& collider, const ShapeInChunk& shape, const std::array<double, 3>& min,
                   const std::array<double, 3>& max, double voxel_size, btScalar threshold, ContactScratch& scratch,
                   ContactCounters& counters, bool correct_edges = true, bool one_sided = false);

/// At most kManifoldPoints of `contacts` spanning the largest area: the deepest (of those as deep, within 2e-5, the
/// farthest from their centre), the farthest from it, the one making the largest triangle with those, and the one
/// making the largest quadrilateral. Up to four are all kept, once per body point and normal (the deepest of those
/// sharing one). Returns how many.
int reduceContacts(std::span<const ChunkContact> contacts, std::span<ChunkContact, kManifoldPoints> out);

/// One chunk's manifold for `shape` with local frame `basis` at world `position`: placeInChunk, chunkContacts (edges
/// corrected) and reduceContacts, into `kept` with points relative to the chunk origin (chunkOriginWorld). Returns
/// how many; none for a convex hull, point cloud or multi-sphere without points (Bullet's GJK reads past its empty
/// array). What TerrainPhysics::contacts and the Bullet adapter's two algorithms search a chunk with.
int chunkManifold(const Collider& collider, const btConvexShape& shape, const btMatrix3x3& basis,
                  const std::array<double, 3>& position, terrain::ChunkCoord chunk, const std::array<double, 3>& min,
                  const std::array<double, 3>& max, double voxel_size, btScalar threshold, bool one_sided,
                  ContactScratch& scratch, ContactCounters& counters, std::span<ChunkContact, kManifoldPoints> kept);

}  // namespace vtp::physics
