#include "bullet_chunk.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>

#include <BulletCollision/CollisionDispatch/btInternalEdgeUtility.h>
#include <BulletCollision/NarrowPhaseCollision/btRaycastCallback.h>
#include <btBulletCollisionCommon.h>

namespace vtp::tools {
namespace {

std::atomic<std::size_t> g_live{0};

void* countedAlloc(std::size_t size) {
  void* p = std::malloc(size);
  if (p != nullptr) g_live += malloc_usable_size(p);
  return p;
}

void countedFree(void* p) {
  if (p == nullptr) return;
  g_live -= malloc_usable_size(p);
  std::free(p);
}

}  // namespace

void installBulletAllocationCounter() { btAlignedAllocSetCustom(countedAlloc, countedFree); }
std::size_t bulletLiveBytes() { return g_live.load(); }

BulletChunk::BulletChunk(const physics::Collider& collider, double voxel_size) {
  const double s = voxel_size / physics::kGridScale;
  // Vertices per triangle corner, deduplicated through the collider's own numbering: rebuild that numbering here.
  m_vertices.reserve(std::size_t(3 * collider.vertexCount()));
  m_indices.reserve(std::size_t(3 * collider.triangleCount()));
  std::vector<int> seen;
  std::vector<std::array<std::int16_t, 3>> keys;
  for (int t = 0; t < collider.triangleCount(); ++t) {
    const physics::ColliderTriangle tri = collider.triangle(t);
    for (const mesher::Vertex& v : tri.vertices) {
      // Small meshes: a linear search keeps this simple and is outside every timed region.
      int found = -1;
      for (std::size_t k = 0; k < keys.size(); ++k)
        if (keys[k][0] == v.x && keys[k][1] == v.y && keys[k][2] == v.z) found = int(k);
      if (found < 0) {
        found = int(keys.size());
        keys.push_back({v.x, v.y, v.z});
        m_vertices.insert(m_vertices.end(), {float(v.x * s), float(v.y * s), float(v.z * s)});
      }
      m_indices.push_back(found);
    }
  }
  m_vertices.shrink_to_fit();
  m_indices.shrink_to_fit();
}

BulletChunk::~BulletChunk() = default;

void BulletChunk::release() {
  m_shape.reset();
  m_edge_info.reset();
  m_mesh.reset();
}

void BulletChunk::build(bool quantized) {
  release();
  const std::size_t before = bulletLiveBytes();
  btIndexedMesh part;
  part.m_numTriangles = int(m_indices.size() / 3);
  part.m_triangleIndexBase = reinterpret_cast<const unsigned char*>(m_indices.data());
  part.m_triangleIndexStride = 3 * sizeof(int);
  part.m_numVertices = int(m_vertices.size() / 3);
  part.m_vertexBase = reinterpret_cast<const unsigned char*>(m_vertices.data());
  part.m_vertexStride = 3 * sizeof(float);
  part.m_indexType = PHY_INTEGER;
  part.m_vertexType = PHY_FLOAT;
  m_mesh = std::make_unique<btTriangleIndexVertexArray>();
  m_mesh->addIndexedMesh(part, PHY_INTEGER);
  m_shape = std::make_unique<btBvhTriangleMeshShape>(m_mesh.get(), quantized, true);
  m_bullet_bytes = bulletLiveBytes() - before;
}

std::size_t BulletChunk::generateEdgeInfo() {
  m_shape->setTriangleInfoMap(nullptr);  // btGenerateInternalEdgeInfo fills only a shape without a map
  m_edge_info.reset();
  const std::size_t before = bulletLiveBytes();
  m_edge_info = std::make_unique<btTriangleInfoMap>();
  btGenerateInternalEdgeInfo(m_shape.get(), m_edge_info.get());
  // The map's hash tables come from Bullet's allocator, which the counter sees; the map object from operator new.
  return bulletLiveBytes() - before + sizeof(btTriangleInfoMap);
}

bool BulletChunk::closestHit(const float* from, const float* to, float& fraction, int& triangle) const {
  struct Closest : btTriangleRaycastCallback {
    Closest(const btVector3& a, const btVector3& b) : btTriangleRaycastCallback(a, b) {}
    int id = -1;
    btScalar reportHit(const btVector3&, btScalar hit_fraction, int, int triangle_index) override {
      id = triangle_index;
      return hit_fraction;
    }
  };
  const btVector3 a(from[0], from[1], from[2]), b(to[0], to[1], to[2]);
  Closest callback(a, b);
  m_shape->performRaycast(&callback, a, b);
  if (callback.id < 0) return false;
  fraction = float(callback.m_hitFraction);
  triangle = callback.id;
  return true;
}

void BulletChunk::gather(const float* lo, const float* hi, std::vector<int>& ids) const {
  struct Collect : btTriangleCallback {
    std::vector<int>* out;
    void processTriangle(btVector3*, int, int triangle_index) override { out->push_back(triangle_index); }
  } callback;
  ids.clear();
  callback.out = &ids;
  m_shape->processAllTriangles(&callback, btVector3(lo[0], lo[1], lo[2]), btVector3(hi[0], hi[1], hi[2]));
}

}  // namespace vtp::tools
