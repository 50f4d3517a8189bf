// Rays across chunks: the chunk walk (chunk_walk.h) visits chunks in order of entry, so a closest-hit query stops at
// the first chunk entered beyond its best hit. Chunks without a MIXED mask with solid bits own no triangle and are
// skipped without touching the collider cache.
#include <algorithm>
#include <vector>

#include "query/chunk_walk.h"
#include "vtp/physics/terrain_physics.h"
#include "query/world_frame_ray.h"

namespace vtp::physics {

using terrain::ChunkCoord;

template <class Continue, class Visit>
Status TerrainPhysics::walkColliders(const Ray& ray, Continue&& keep_going, Visit&& visit) {
  // The ray prepared (and checked) once; each chunk gets it by an integer shift.
  WorldFrameRay frame;
  if (Status s = prepareWorldFrameRay(ray, m_voxel_size, frame); !s) return s;
  Status failed;
  ChunkRay prepared;
  walkChunks(ray, m_voxel_size, [&](ChunkCoord c, double entry) {
    if (!keep_going(entry)) return false;
    if (!m_masks->mayOwnTriangles(c)) return true;
    auto pin = m_colliders->acquire(c, ColliderUse::kQueries);
    if (!pin) failed = pin.error();
    else if (Status s = rayInChunk(frame, c, prepared); !s) failed = s;
    if (!failed) return false;
    return visit(**pin, prepared, c);
  });
  return failed;
}

Result<bool> TerrainPhysics::raycastClosest(const Ray& ray, WorldRayHit& hit) {
  bool found = false;
  double best = ray.max_t;
  Status s = walkColliders(
      ray, [&](double entry) { return !found || entry <= best; },
      [&](const Collider& collider, const ChunkRay& prepared, ChunkCoord c) {
        RayHit h;
        if (collider.closestHit(prepared, h) && (!found || h.t < best)) {
          found = true;
          best = h.t;
          hit = {h, c, collider.triangle(h.triangle).vertices};
        }
        return true;
      });
  if (!s) return s.error();
  return found;
}

Result<bool> TerrainPhysics::raycastAny(const Ray& ray) {
  bool found = false;
  Status s = walkColliders(
      ray, [](double) { return true; },
      [&](const Collider& collider, const ChunkRay& prepared, ChunkCoord) {
        found = collider.anyHit(prepared);
        return !found;
      });
  if (!s) return s.error();
  return found;
}

Status TerrainPhysics::raycastAll(const Ray& ray, std::vector<WorldRayHit>& out) {
  out.clear();
  thread_local std::vector<RayHit> hits(mesher::kMaxTriangles);
  Status s = walkColliders(
      ray, [](double) { return true; },
      [&](const Collider& collider, const ChunkRay& prepared, ChunkCoord c) {
        const int n = std::min(collider.allHits(prepared, hits), int(hits.size()));
        for (int i = 0; i < n; ++i) {
          const RayHit& h = hits[std::size_t(i)];
          out.push_back({h, c, collider.triangle(h.triangle).vertices});
        }
        return true;
      });
  if (!s) return s;
  std::sort(out.begin(), out.end(), [](const WorldRayHit& a, const WorldRayHit& b) {
    if (a.hit.t != b.hit.t) return a.hit.t < b.hit.t;
    if (!(a.chunk == b.chunk)) return a.chunk < b.chunk;
    return a.hit.triangle < b.hit.triangle;
  });
  return {};
}

}  // namespace vtp::physics
