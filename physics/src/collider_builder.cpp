#include "vtp/physics/collider_builder.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace vtp::physics {

namespace {

// Bytes read past the end of the index arrays by 8-wide loads (7 u16) and past the last vertex by 8-byte loads
// (2 bytes); the materials follow the indices, so a few bytes of tail cover both for any triangle count.
constexpr std::size_t kTailBytes = 16;

}  // namespace

ColliderBuilder::ColliderBuilder(KdBuildOptions options) : m_options(options) {}

Result<std::unique_ptr<Collider>> ColliderBuilder::build(const mesher::ChunkMesh& mesh, terrain::ChunkCoord chunk) {
  const int triangles = mesh.owned_triangle_count;
  if (triangles < 0 || triangles > mesh.triangle_count || std::size_t(3 * mesh.triangle_count) > mesh.indices.size() ||
      std::size_t(mesh.triangle_count) > mesh.materials.size() || mesh.vertex_count < 0 ||
      std::size_t(mesh.vertex_count) > mesh.vertices.size() || triangles > mesher::kMaxWideTriangles) {
    return Error{ErrorCode::kInvalidArgument, "ColliderBuilder: the mesh's counts exceed its buffers", {}};
  }
  // Used vertices, renumbered in their original order.
  m_remap.assign(std::size_t(mesh.vertex_count), -1);
  for (int i = 0; i < 3 * triangles; ++i) {
    const std::uint16_t v = mesh.indices[std::size_t(i)];
    if (v >= mesh.vertex_count) {
      return Error{ErrorCode::kInvalidArgument, "ColliderBuilder: a triangle index is past vertex_count", {}};
    }
    m_remap[v] = 0;
  }
  int vertices = 0;
  for (std::int32_t& r : m_remap)
    if (r == 0) r = vertices++;
  if (vertices > 0x7FFF) return Error{ErrorCode::kInvalidArgument, "ColliderBuilder: too many vertices", {}};

  m_bounds.resize(std::size_t(triangles));
  std::array<std::int16_t, 6> all{std::numeric_limits<std::int16_t>::max(), std::numeric_limits<std::int16_t>::max(),
                                  std::numeric_limits<std::int16_t>::max(), std::numeric_limits<std::int16_t>::min(),
                                  std::numeric_limits<std::int16_t>::min(), std::numeric_limits<std::int16_t>::min()};
  for (int t = 0; t < triangles; ++t) {
    TriangleBounds& b = m_bounds[std::size_t(t)];
    for (int a = 0; a < 3; ++a) {
      auto coord = [&](int k) {
        const mesher::Vertex& v = mesh.vertices[mesh.indices[std::size_t(3 * t + k)]];
        return a == 0 ? v.x : a == 1 ? v.y : v.z;
      };
      b.min[a] = std::min({coord(0), coord(1), coord(2)});
      b.max[a] = std::max({coord(0), coord(1), coord(2)});
      all[a] = std::min(all[a], b.min[a]);
      all[3 + a] = std::max(all[3 + a], b.max[a]);
    }
  }
  buildKd(m_bounds, m_options, m_kd);
  const int leaves = int(m_kd.leaves.size());
  const int groups = (leaves + kLeafGroup - 1) / kLeafGroup;

  const std::size_t bytes = std::size_t(groups) * 6 * kLeafGroup * sizeof(std::int16_t) +
                            std::size_t(leaves + 1) * sizeof(std::uint16_t) +
                            std::size_t(vertices) * 3 * sizeof(std::int16_t) +
                            std::size_t(triangles) * (3 * sizeof(std::uint16_t) + 1) + kTailBytes;
  std::unique_ptr<Collider> c(new Collider());
  c->m_data.reset(new std::byte[bytes]);
  std::memset(c->m_data.get(), 0, bytes);
  c->m_allocation_bytes = std::uint32_t(bytes);
  c->m_chunk = chunk;
  c->m_triangles = std::uint16_t(triangles);
  c->m_vertices = std::uint16_t(vertices);
  c->m_leaves = std::uint16_t(leaves);
  c->m_bounds = all;

  // Leaf boxes, 8 per group as structure of arrays; unused lanes hold an empty box (min > max) that nothing overlaps.
  auto* boxes = reinterpret_cast<std::int16_t*>(c->m_data.get());
  for (int g = 0; g < groups; ++g)
    for (int lane = 0; lane < kLeafGroup; ++lane)
      for (int a = 0; a < 3; ++a) {
        boxes[(6 * g + a) * kLeafGroup + lane] = std::numeric_limits<std::int16_t>::max();
        boxes[(6 * g + 3 + a) * kLeafGroup + lane] = std::numeric_limits<std::int16_t>::min();
      }
  auto* leaf_start = const_cast<std::uint16_t*>(c->leafStart());
  for (int l = 0; l < leaves; ++l) {
    const KdLeaf& leaf = m_kd.leaves[std::size_t(l)];
    leaf_start[l] = std::uint16_t(leaf.first);
    const int g = l / kLeafGroup, lane = l % kLeafGroup;
    for (int i = leaf.first; i < leaf.first + leaf.count; ++i) {
      const TriangleBounds& b = m_bounds[m_kd.order[std::size_t(i)]];
      for (int a = 0; a < 3; ++a) {
        std::int16_t& lo = boxes[(6 * g + a) * kLeafGroup + lane];
        std::int16_t& hi = boxes[(6 * g + 3 + a) * kLeafGroup + lane];
        lo = std::min(lo, b.min[a]);
        hi = std::max(hi, b.max[a]);
      }
    }
  }
  leaf_start[leaves] = std::uint16_t(triangles);

  auto* positions = const_cast<std::int16_t*>(c->positions());
  for (int v = 0; v < mesh.vertex_count; ++v) {
    const std::int32_t r = m_remap[std::size_t(v)];
    if (r < 0) continue;
    const mesher::Vertex& p = mesh.vertices[std::size_t(v)];
    positions[3 * r] = p.x;
    positions[3 * r + 1] = p.y;
    positions[3 * r + 2] = p.z;
  }
  auto* materials = const_cast<std::uint8_t*>(c->materials());
  for (int i = 0; i < triangles; ++i) {
    const std::uint16_t t = m_kd.order[std::size_t(i)];
    for (int k = 0; k < 3; ++k) {
      const_cast<std::uint16_t*>(c->corner(k))[i] = std::uint16_t(m_remap[mesh.indices[std::size_t(3 * t + k)]]);
    }
    materials[i] = mesh.materials[t];
  }
  return c;
}

}  // namespace vtp::physics
