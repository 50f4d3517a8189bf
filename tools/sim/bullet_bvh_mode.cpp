// The `bullet-bvh` mode (bullet_bvh_mode.h).
#include "bullet_bvh_mode.h"

#include <BulletCollision/CollisionDispatch/btCollisionDispatcher.h>
#include <BulletCollision/CollisionShapes/btBvhTriangleMeshShape.h>
#include <BulletCollision/CollisionShapes/btTriangleIndexVertexArray.h>

#include <map>
#include <set>
#include <vector>

#include "alloc_hook.h"
#include "vtp/mesher/surface_mesher.h"

namespace vtp::tools::sim {
namespace {

using terrain::ChunkCoord;

// Marks the chunk objects (btCollisionObject::getUserIndex), so the near-callback and the rays recognise them.
constexpr int kChunkObject = 0x7e77a1;

// Counts per-triangle convex-convex algorithms (each runs one GJK) for non-sphere shapes against Bullet's triangles;
// sphere-triangle has its own algorithm, as vtp's sphere test does.
struct CountingCreateFunc : btCollisionAlgorithmCreateFunc {
  btCollisionAlgorithmCreateFunc* inner = nullptr;
  std::uint64_t* count = nullptr;
  btCollisionAlgorithm* CreateCollisionAlgorithm(btCollisionAlgorithmConstructionInfo& info,
                                                 const btCollisionObjectWrapper* a,
                                                 const btCollisionObjectWrapper* b) override {
    ++*count;
    return inner->CreateCollisionAlgorithm(info, a, b);
  }
};

struct BvhChunk {
  std::vector<float> vertices;
  std::vector<int> indices;
  std::unique_ptr<btTriangleIndexVertexArray> mesh;
  std::unique_ptr<btBvhTriangleMeshShape> shape;
  std::unique_ptr<btCollisionObject> object;
  std::size_t bytes = 0;
};

class BulletBvhBackend final : public TerrainBackend {
 public:
  ~BulletBvhBackend() override {
    for (auto& [coord, chunk] : m_chunks) m_dynamics->removeCollisionObject(chunk->object.get());
  }
  const char* key() const override { return "bullet_bvh"; }

  // Debian's Bullet is built without its task scheduler: this mode's collision runs on the stepping thread.
  Status open(terrain::World& world, btDiscreteDynamicsWorld& dynamics, std::size_t, physics::TaskRunner*) override {
    m_world = &world;
    m_dynamics = &dynamics;
    auto* dispatcher = static_cast<btCollisionDispatcher*>(dynamics.getDispatcher());
    auto* config = dispatcher->getCollisionConfiguration();
    for (int type : {BOX_SHAPE_PROXYTYPE, CAPSULE_SHAPE_PROXYTYPE, CONVEX_HULL_SHAPE_PROXYTYPE}) {
      for (int order = 0; order < 2; ++order) {
        const int a = order == 0 ? type : TRIANGLE_SHAPE_PROXYTYPE, b = order == 0 ? TRIANGLE_SHAPE_PROXYTYPE : type;
        auto counting = std::make_unique<CountingCreateFunc>();
        counting->inner = config->getCollisionAlgorithmCreateFunc(a, b);
        counting->count = &m_gjk_calls;
        dispatcher->registerCollisionCreateFunc(a, b, counting.get());
        m_create_funcs.push_back(std::move(counting));
      }
    }
    // Every chunk that can own triangles: the stored ones and their neighbours (a chunk's triangles come from its
    // 10^3 box).
    std::set<ChunkCoord> candidates;
    {
      const terrain::WorldSnapshot snapshot = world.snapshot();
      for (const auto& entry : snapshot.chunks())
        for (int dz = -1; dz <= 1; ++dz)
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx)
              candidates.insert({entry.coord.x + dx, entry.coord.y + dy, entry.coord.z + dz});
    }
    for (const ChunkCoord& c : candidates)
      if (Status s = rebuild(c); !s) return s;
    return {};
  }

  bool isTerrain(const btCollisionObject* object) const override { return object->getUserIndex() == kChunkObject; }

  void afterEdit(const terrain::VoxelBox& changed) override {
    // Chunks whose 10^3 box (the chunk grown by one voxel) meets the changed voxels.
    const ChunkCoord lo = terrain::chunkOf({changed.min.x - 1, changed.min.y - 1, changed.min.z - 1});
    const ChunkCoord hi = terrain::chunkOf({changed.max.x, changed.max.y, changed.max.z});
    for (int z = lo.z; z <= hi.z; ++z)
      for (int y = lo.y; y <= hi.y; ++y)
        for (int x = lo.x; x <= hi.x; ++x) (void)rebuild({x, y, z});
    // Wake the bodies whose box comes within a voxel of the change, as the vtp adapter's wakeBodies does.
    const double s = m_world->voxelSize();
    const btVector3 min(btScalar((changed.min.x - 1) * s), btScalar((changed.min.y - 1) * s), btScalar((changed.min.z - 1) * s));
    const btVector3 max(btScalar((changed.max.x + 1) * s), btScalar((changed.max.y + 1) * s), btScalar((changed.max.z + 1) * s));
    btCollisionObjectArray& objects = m_dynamics->getCollisionObjectArray();
    for (int i = 0; i < objects.size(); ++i) {
      btCollisionObject* o = objects[i];
      if (o->isStaticObject()) continue;
      btVector3 a, b;
      o->getCollisionShape()->getAabb(o->getWorldTransform(), a, b);
      if (TestAabbAgainstAabb2(a, b, min, max)) o->activate(true);
    }
  }

  int castRays(std::span<const physics::Ray> rays) override {
    struct TerrainOnly : btCollisionWorld::ClosestRayResultCallback {
      using ClosestRayResultCallback::ClosestRayResultCallback;
      bool needsCollision(btBroadphaseProxy* proxy) const override {
        return static_cast<const btCollisionObject*>(proxy->m_clientObject)->getUserIndex() == kChunkObject;
      }
    };
    int hits = 0;
    for (const physics::Ray& r : rays) {
      const btVector3 from(btScalar(r.origin[0]), btScalar(r.origin[1]), btScalar(r.origin[2]));
      const btVector3 to(btScalar(r.origin[0] + r.direction[0] * r.max_t), btScalar(r.origin[1] + r.direction[1] * r.max_t),
                         btScalar(r.origin[2] + r.direction[2] * r.max_t));
      TerrainOnly callback(from, to);
      m_dynamics->rayTest(from, to, callback);
      hits += callback.hasHit() ? 1 : 0;
    }
    return hits;
  }

  BackendCounters counters() const override {
    BackendCounters c;
    c.gjk_calls = m_gjk_calls;
    c.colliders_built = m_builds;
    for (const auto& [coord, chunk] : m_chunks) c.cache_bytes += chunk->bytes;
    c.details = {{"chunk_objects", m_chunks.size()}};
    return c;
  }

 private:
  // Re-meshes chunk `c` and replaces its object (none when it has no triangles).
  Status rebuild(ChunkCoord c) {
    if (auto it = m_chunks.find(c); it != m_chunks.end()) {
      m_dynamics->removeCollisionObject(it->second->object.get());
      m_chunks.erase(it);
    }
    const terrain::VoxelCoord o = terrain::chunkOrigin(c);
    const terrain::VoxelBox box = terrain::grown(terrain::chunkBox(c), mesher::kApron);
    if (Status s = m_world->readBox(box, m_voxels); !s) return s;
    auto count = m_mesher.mesh(m_voxels, mesher::kApron, m_mesh);
    if (!count) return count.error();
    if (*count == 0) return {};
    const std::size_t before = taggedLiveBytes(currentTag());
    auto chunk = std::make_unique<BvhChunk>();
    const double s = m_world->voxelSize() / mesher::kPositionScale;
    chunk->vertices.reserve(std::size_t(3 * m_mesh.vertex_count));
    for (int v = 0; v < m_mesh.vertex_count; ++v) {
      const mesher::Vertex& p = m_mesh.vertices[std::size_t(v)];
      chunk->vertices.insert(chunk->vertices.end(), {float(p.x * s), float(p.y * s), float(p.z * s)});
    }
    chunk->indices.assign(m_mesh.indices.begin(), m_mesh.indices.begin() + 3 * m_mesh.triangle_count);
    btIndexedMesh part;
    part.m_numTriangles = m_mesh.triangle_count;
    part.m_triangleIndexBase = reinterpret_cast<const unsigned char*>(chunk->indices.data());
    part.m_triangleIndexStride = 3 * sizeof(int);
    part.m_numVertices = m_mesh.vertex_count;
    part.m_vertexBase = reinterpret_cast<const unsigned char*>(chunk->vertices.data());
    part.m_vertexStride = 3 * sizeof(float);
    part.m_indexType = PHY_INTEGER;
    part.m_vertexType = PHY_FLOAT;
    chunk->mesh = std::make_unique<btTriangleIndexVertexArray>();
    chunk->mesh->addIndexedMesh(part, PHY_INTEGER);
    chunk->shape = std::make_unique<btBvhTriangleMeshShape>(chunk->mesh.get(), true, true);
    chunk->object = std::make_unique<btCollisionObject>();
    chunk->object->setCollisionShape(chunk->shape.get());
    const double v = m_world->voxelSize();
    btTransform t;
    t.setIdentity();
    t.setOrigin(btVector3(btScalar(o.x * v), btScalar(o.y * v), btScalar(o.z * v)));
    chunk->object->setWorldTransform(t);
    chunk->object->setUserIndex(kChunkObject);
    chunk->object->setActivationState(ISLAND_SLEEPING);  // see TerrainBackend::open
    chunk->object->setFriction(0.6f);
    m_dynamics->addCollisionObject(chunk->object.get(), btBroadphaseProxy::StaticFilter,
                                   btBroadphaseProxy::AllFilter ^ btBroadphaseProxy::StaticFilter);
    chunk->bytes = taggedLiveBytes(currentTag()) - before;
    ++m_builds;
    m_chunks.emplace(c, std::move(chunk));
    return {};
  }

  terrain::World* m_world = nullptr;
  btDiscreteDynamicsWorld* m_dynamics = nullptr;
  std::map<ChunkCoord, std::unique_ptr<BvhChunk>> m_chunks;  // ordered: the broadphase sees chunks in one order
  std::vector<std::unique_ptr<CountingCreateFunc>> m_create_funcs;
  mesher::SurfaceMesher m_mesher;
  mesher::ChunkMesh m_mesh;
  std::vector<terrain::Voxel> m_voxels = std::vector<terrain::Voxel>(std::size_t(mesher::boxVolume(mesher::kApron)));
  std::uint64_t m_gjk_calls = 0, m_builds = 0;
};

}  // namespace

std::unique_ptr<TerrainBackend> makeBulletBvhBackend() { return std::make_unique<BulletBvhBackend>(); }

}  // namespace vtp::tools::sim
