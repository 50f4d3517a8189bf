#include "collision_mesh.h"

#include <algorithm>
#include <unordered_map>

#include "vtp/mesher/mesh_candidates.h"
#include "vtp/mesher/surface_mesher.h"

namespace vtp::tools::world {
namespace {

using terrain::ChunkCoord;
using terrain::VoxelBox;

// Every storable voxel: |v| < kStorageLimit on each axis.
constexpr VoxelBox kStorageBox{{-terrain::kStorageLimit + 1, -terrain::kStorageLimit + 1, -terrain::kStorageLimit + 1},
                               {terrain::kStorageLimit, terrain::kStorageLimit, terrain::kStorageLimit}};

struct PositionHash {
  std::size_t operator()(const std::array<std::int64_t, 3>& p) const noexcept {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (const std::int64_t v : p) h = (h ^ std::uint64_t(v)) * 0x100000001b3ull + (h >> 29);
    return std::size_t(h);
  }
};

}  // namespace

std::vector<ChunkCoord> candidateChunks(const terrain::World& world) {
  std::vector<ChunkCoord> out = mesher::candidateChunks(world);
  std::erase_if(out, [](ChunkCoord c) { return terrain::intersect(terrain::chunkBox(c), kStorageBox).empty(); });
  return out;
}

Result<CollisionMesh> collectCollisionMesh(const terrain::World& world, const std::optional<VoxelBox>& box) {
  std::vector<ChunkCoord> chunks = candidateChunks(world);
  if (box) {
    // Chunks outside the candidates are all air with all-air neighbours above: they own nothing, so skipping them
    // gives the same triangles as meshing every chunk of the box.
    const VoxelBox clipped = terrain::intersect(*box, kStorageBox);
    std::erase_if(chunks, [&](ChunkCoord c) {
      return clipped.empty() || terrain::intersect(terrain::chunkBox(c), clipped).empty();
    });
  }

  constexpr int kApron = mesher::kApron;
  constexpr int kScale = mesher::kPositionScale;
  CollisionMesh out;
  mesher::SurfaceMesher surface_mesher;
  mesher::ChunkMesh mesh;
  std::vector<terrain::Voxel> voxels(std::size_t(mesher::boxVolume(kApron)));
  std::unordered_map<std::array<std::int64_t, 3>, std::uint32_t, PositionHash> index_of;
  std::vector<std::uint32_t> global(std::size_t(mesher::kMaxWideVertices));
  for (const ChunkCoord c : chunks) {
    const terrain::VoxelCoord o = terrain::chunkOrigin(c);
    const VoxelBox read{{o.x - kApron, o.y - kApron, o.z - kApron},
                        {o.x + terrain::kChunkSize + kApron, o.y + terrain::kChunkSize + kApron,
                         o.z + terrain::kChunkSize + kApron}};
    if (Status s = world.readBox(read, voxels); !s) return s.error();
    Result<int> meshed = surface_mesher.mesh(voxels, kApron, mesh);
    if (!meshed) return meshed.error();
    ++out.chunks_meshed;
    if (mesh.owned_triangle_count == 0) continue;
    ++out.surface_chunks;
    // Local vertex -> global index, assigned on first use so vertices no owned triangle uses are never written.
    std::fill_n(global.begin(), mesh.vertex_count, UINT32_MAX);
    auto globalIndex = [&](std::uint16_t local) {
      std::uint32_t& g = global[local];
      if (g != UINT32_MAX) return g;
      const mesher::Vertex& v = mesh.vertices[local];
      const std::array<std::int64_t, 3> p{std::int64_t(o.x) * kScale + v.x, std::int64_t(o.y) * kScale + v.y,
                                          std::int64_t(o.z) * kScale + v.z};
      auto [it, inserted] = index_of.try_emplace(p, std::uint32_t(out.positions.size()));
      if (inserted) out.positions.push_back(p);
      g = it->second;
      return g;
    };
    for (int t = 0; t < mesh.owned_triangle_count; ++t) {
      const std::uint16_t* idx = &mesh.indices[std::size_t(3 * t)];
      out.triangles.push_back({globalIndex(idx[0]), globalIndex(idx[1]), globalIndex(idx[2])});
      out.materials.push_back(mesh.materials[std::size_t(t)]);
    }
  }
  return out;
}

}  // namespace vtp::tools::world
