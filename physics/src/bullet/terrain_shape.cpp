// TerrainShape: Bullet's queries on the terrain object. Rays become world rays (TerrainPhysics::raycast*), convex
// casts walk their path in pieces of half a chunk, and anything else gets the triangles under its box; only chunks
// whose masks hold solid bits are opened.
#include <BulletCollision/NarrowPhaseCollision/btRaycastCallback.h>

#include <algorithm>
#include <cmath>

#include "bullet/bullet_terrain_state.h"

namespace vtp::physics {
namespace {

// The terrain object's bounds: far beyond physics' range of 2^16 voxels, so a body that leaves the range still pairs
// with the terrain in Bullet's broadphase, and its algorithm lists it (bodiesOutsideRange) instead of never running.
constexpr double kReachVoxels = 1073741824.0;  // 2^30

// A triangle's key for de-duplication within one query: the chunk (within range, 14 bits an axis) and the id.
std::uint64_t triangleKey(terrain::ChunkCoord c, int id) {
  auto bits = [](std::int32_t v) { return std::uint64_t(std::uint32_t(v) & 0x3FFFu); };
  return bits(c.x) << 40 | bits(c.y) << 26 | bits(c.z) << 12 | std::uint64_t(id);
}

}  // namespace

TerrainShape::TerrainShape(BulletTerrainState& state) : m_state(state) { m_shapeType = CUSTOM_CONCAVE_SHAPE_TYPE; }

void TerrainShape::getAabb(const btTransform& t, btVector3& aabb_min, btVector3& aabb_max) const {
  const auto r = btScalar(kReachVoxels * m_state.physics.voxelSize());
  aabb_min = t.getOrigin() - btVector3(r, r, r);
  aabb_max = t.getOrigin() + btVector3(r, r, r);
}

void TerrainShape::calculateLocalInertia(btScalar, btVector3& inertia) const { inertia.setValue(0, 0, 0); }

void TerrainShape::setLocalScaling(const btVector3&) {}  // the terrain has the world's voxel size; no scaling

void TerrainShape::processAllTriangles(btTriangleCallback* callback, const btVector3& aabb_min,
                                       const btVector3& aabb_max) const {
  if (auto* ray = dynamic_cast<btTriangleRaycastCallback*>(callback)) return raycast(*ray);
  if (auto* cast = dynamic_cast<btTriangleConvexcastCallback*>(callback)) return convexcast(*cast);
  feedBox(*callback, aabb_min, aabb_max, nullptr);
}

void TerrainShape::raycast(btTriangleRaycastCallback& callback) const {
  const btVector3 d = callback.m_to - callback.m_from;
  const Ray ray{{callback.m_from.x(), callback.m_from.y(), callback.m_from.z()}, {d.x(), d.y(), d.z()},
                double(callback.m_hitFraction)};
  const double voxel_size = m_state.physics.voxelSize();
  auto feed = [&](const WorldRayHit& h) {
    const std::array<double, 3> o = chunkOriginWorld(h.chunk, voxel_size);
    const double s = voxel_size / kGridScale;
    btVector3 v[3];
    for (int k = 0; k < 3; ++k) {
      const mesher::Vertex& p = h.vertices[std::size_t(k)];  // from the collider the hit came from
      v[k] = btVector3(btScalar(o[0] + p.x * s), btScalar(o[1] + p.y * s), btScalar(o[2] + p.z * s));
    }
    callback.processTriangle(v, 0, h.hit.triangle);
  };
  // Our closest hit first; Bullet's own triangle test decides (its back-face filters, say). Should it refuse that
  // triangle, or take it without lowering the fraction (an all-hits callback), every other hit along the ray, in
  // order, until one is taken.
  WorldRayHit hit;
  auto found = m_state.physics.raycastClosest(ray, hit);
  if (!found || !*found) return;
  const btScalar before = callback.m_hitFraction;
  feed(hit);
  if (callback.m_hitFraction < before) return;
  thread_local std::vector<WorldRayHit> all;
  if (!m_state.physics.raycastAll(ray, all)) return;
  for (const WorldRayHit& h : all) {
    if (h.chunk == hit.chunk && h.hit.triangle == hit.hit.triangle) continue;  // fed above
    feed(h);
    if (callback.m_hitFraction < before) return;
  }
}

void TerrainShape::convexcast(btTriangleConvexcastCallback& callback) const {
  btVector3 centre;
  btScalar radius;
  callback.m_convexShape->getBoundingSphere(centre, radius);
  const btScalar reach = radius + centre.length() + callback.m_triangleCollisionMargin;
  const btVector3 from = callback.m_convexShapeFrom.getOrigin(), to = callback.m_convexShapeTo.getOrigin();
  const double piece = 0.5 * terrain::kChunkSize * m_state.physics.voxelSize();
  const double length = double((to - from).length());
  if (!std::isfinite(length) || !std::isfinite(double(reach))) return;  // a broken transform: nothing to hit
  const int pieces = int(std::clamp(std::ceil(length / piece), 1.0, 4096.0));
  // A sphere of radius 16 swept 400 voxels meets 10^5 triangles. clear() zeroes every bucket, so a set grown that
  // large is dropped instead: each later sweep on the thread (continuous collision, every step) would pay for them.
  thread_local std::unordered_set<std::uint64_t> seen;
  if (seen.bucket_count() > 4096) seen = {};
  seen.clear();
  for (int k = 0; k < pieces; ++k) {
    // A hit before this piece's start cannot be beaten by triangles that only this piece's box reaches.
    if (double(callback.m_hitFraction) < double(k) / pieces) return;
    const btVector3 a = from.lerp(to, btScalar(k) / btScalar(pieces));
    const btVector3 b = from.lerp(to, btScalar(k + 1) / btScalar(pieces));
    const btVector3 grow(reach, reach, reach);
    btVector3 lo = a, hi = a;
    lo.setMin(b);
    hi.setMax(b);
    feedBox(callback, lo - grow, hi + grow, &seen);
  }
}

void TerrainShape::feedBox(btTriangleCallback& callback, const btVector3& min, const btVector3& max,
                           std::unordered_set<std::uint64_t>* seen) const {
  thread_local std::vector<ChunkTouch> touches;
  if (!m_state.physics.masks().query({{min.x(), min.y(), min.z()}, {max.x(), max.y(), max.z()}}, touches)) return;
  const double voxel_size = m_state.physics.voxelSize();
  thread_local ContactScratch scratch;
  for (const ChunkTouch& touch : touches) {
    if (!touch.solid || touch.tag != MaskTag::kMixed) continue;
    auto pin = m_state.physics.colliders().acquire(touch.chunk, ColliderUse::kQueries);  // a gather: no edge flags
    if (!pin) continue;
    const int n = gatherTriangles(*pin.value(), {min.x(), min.y(), min.z()}, {max.x(), max.y(), max.z()}, voxel_size,
                                  scratch);
    const std::array<double, 3> o = chunkOriginWorld(touch.chunk, voxel_size);
    for (int i = 0; i < n; ++i) {
      const int id = scratch.ids[std::size_t(i)];
      if (seen && !seen->insert(triangleKey(touch.chunk, id)).second) continue;
      btVector3 v[3];
      for (int k = 0; k < 3; ++k) {
        const auto& p = scratch.vertices[3 * std::size_t(i) + std::size_t(k)];
        v[k] = btVector3(btScalar(o[0] + p[0]), btScalar(o[1] + p[1]), btScalar(o[2] + p[2]));
      }
      callback.processTriangle(v, 0, id);
    }
  }
}

}  // namespace vtp::physics
