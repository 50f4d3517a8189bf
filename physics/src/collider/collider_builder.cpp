#include "vtp/physics/collider_builder.h"

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>

#include "collider/edge_flags.h"

namespace vtp::physics {

namespace {

// Nothing is read past the allocation: the SIMD kernels' 8-byte vertex loads read at most 2 bytes past the last
// vertex, into the corner offsets that follow the positions (present whenever a vertex is), and every other load
// stays inside its section.

}  // namespace

ColliderBuilder::ColliderBuilder(KdBuildOptions options)
    : m_options(options), m_edge_scratch(std::make_unique<EdgeFlagScratch>()) {}

ColliderBuilder::~ColliderBuilder() = default;

Result<std::unique_ptr<Collider>> ColliderBuilder::build(const mesher::ChunkMesh& mesh, terrain::ChunkCoord chunk,
                                                         ColliderUse use) {
  const int triangles = mesh.owned_triangle_count;
  if (mesh.triangle_count < 0 || mesh.triangle_count > mesher::kMaxWideTriangles) {
    return Error{ErrorCode::kInvalidArgument, "ColliderBuilder: triangle_count is out of range", {}};
  }
  if (triangles < 0 || triangles > mesh.triangle_count || std::size_t(3 * mesh.triangle_count) > mesh.indices.size() ||
      std::size_t(mesh.triangle_count) > mesh.materials.size() || mesh.vertex_count < 0 ||
      std::size_t(mesh.vertex_count) > mesh.vertices.size() || triangles > mesher::kMaxTriangles) {
    return Error{ErrorCode::kInvalidArgument, "ColliderBuilder: the mesh's counts exceed its buffers", {}};
  }
  // Every index, the neighbours' too (the edge flags read them), within the vertices: the largest, by a loop the
  // compiler vectorises.
  const std::uint16_t* indices = mesh.indices.data();
  unsigned largest = 0;
  for (int i = 0; i < 3 * mesh.triangle_count; ++i) largest = std::max<unsigned>(largest, indices[i]);
  if (mesh.triangle_count > 0 && largest >= unsigned(mesh.vertex_count)) {
    return Error{ErrorCode::kInvalidArgument, "ColliderBuilder: a triangle index is past vertex_count", {}};
  }
  // Triangle bounds: each vertex is one 8-byte load (x, y, z, pad), min and max in int16 lanes. The same pass marks
  // the vertices in use (0 in m_remap; then each used vertex's new number times 3, its offset in the positions).
  m_remap.assign(std::size_t(mesh.vertex_count), -1);
  std::int32_t* remap = m_remap.data();
  // One more entry: each triangle's bounds are written as 16 bytes, the last 4 into the next entry.
  m_bounds.resize(std::size_t(triangles) + 1);
  static_assert(sizeof(TriangleBounds) == 12);
  auto* bounds = reinterpret_cast<std::byte*>(m_bounds.data());
  __m128i all_min = _mm_set1_epi16(std::numeric_limits<std::int16_t>::max());
  __m128i all_max = _mm_set1_epi16(std::numeric_limits<std::int16_t>::min());
  const mesher::Vertex* vertices_in = mesh.vertices.data();
  auto vertex = [&](int i) {
    const std::uint16_t v = indices[i];
    remap[v] = 0;
    return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(vertices_in + v));
  };
  for (int t = 0; t < triangles; ++t) {
    const __m128i v0 = vertex(3 * t), v1 = vertex(3 * t + 1), v2 = vertex(3 * t + 2);
    const __m128i lo = _mm_min_epi16(v0, _mm_min_epi16(v1, v2)), hi = _mm_max_epi16(v0, _mm_max_epi16(v1, v2));
    all_min = _mm_min_epi16(all_min, lo);
    all_max = _mm_max_epi16(all_max, hi);
    // min x, y, z, max x, y, z: lanes 0-2 of lo and of hi, side by side.
    const __m128i row = _mm_shuffle_epi8(_mm_unpacklo_epi64(lo, hi),
                                         _mm_setr_epi8(0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, -1, -1, -1, -1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(bounds + sizeof(TriangleBounds) * std::size_t(t)), row);
  }
  alignas(16) std::int16_t lo_all[8], hi_all[8];
  _mm_store_si128(reinterpret_cast<__m128i*>(lo_all), all_min);
  _mm_store_si128(reinterpret_cast<__m128i*>(hi_all), all_max);
  const std::array<std::int16_t, 6> all{lo_all[0], lo_all[1], lo_all[2], hi_all[0], hi_all[1], hi_all[2]};
  // The stored vertices (the owned triangles') within the mesher's range: the query kernels' integer products
  // (makeHit's normal) count on coordinates below 2^14 in magnitude.
  if (triangles > 0 && (std::min({all[0], all[1], all[2]}) < mesher::kMinPosition ||
                        std::max({all[3], all[4], all[5]}) > mesher::kMaxPosition)) {
    return Error{ErrorCode::kInvalidArgument,
                 "ColliderBuilder: a vertex lies outside " + std::to_string(mesher::kMinPosition) + ".." +
                     std::to_string(mesher::kMaxPosition),
                 {}};
  }
  // Used vertices, renumbered in their original order.
  int vertices = 0;
  for (std::int32_t& r : m_remap)
    if (r == 0) r = 3 * vertices++;
  // Corner offsets (3 x vertex index) must fit in 15 bits, bit 15 being the edge flag.
  if (3 * (vertices - 1) > 0x7FFF) return Error{ErrorCode::kInvalidArgument, "ColliderBuilder: too many vertices", {}};
  buildKd(std::span<const TriangleBounds>(m_bounds.data(), std::size_t(triangles)), m_options, m_kd, m_kd_scratch);
  const int leaves = int(m_kd.leaves.size());
  const int groups = (leaves + kLeafGroup - 1) / kLeafGroup;

  const std::size_t bytes = std::size_t(groups) * 6 * kLeafGroup * sizeof(std::int16_t) +
                            std::size_t(leaves + 1) * sizeof(std::uint16_t) +
                            std::size_t(vertices) * 3 * sizeof(std::int16_t) +
                            (std::size_t(3 * triangles) + kCornerPadding) * sizeof(std::uint16_t) +
                            std::size_t(triangles);
  std::unique_ptr<Collider> c(new Collider());
  c->m_data.reset(new std::byte[bytes]);
  c->m_allocation_bytes = std::uint32_t(bytes);
  c->m_chunk = chunk;
  c->m_triangles = std::uint16_t(triangles);
  c->m_vertices = std::uint16_t(vertices);
  c->m_leaves = std::uint16_t(leaves);
  c->m_bounds = all;
  c->m_sections[0] = std::uint32_t(6 * kLeafGroup * groups);
  c->m_sections[1] = c->m_sections[0] + std::uint32_t(leaves + 1);
  c->m_sections[2] = c->m_sections[1] + std::uint32_t(3 * vertices);
  for (int a = 0; a < 3; ++a) c->m_flat_axes = std::uint8_t(c->m_flat_axes | unsigned(all[a] == all[3 + a]) << a);

  // Leaf boxes, 8 per group as structure of arrays; the last group's unused lanes hold an empty box (min > max)
  // that nothing overlaps.
  auto* boxes = reinterpret_cast<std::int16_t*>(c->m_data.get());
  for (int l = leaves; l < groups * kLeafGroup; ++l) {
    std::int16_t* group = boxes + 6 * kLeafGroup * (l / kLeafGroup) + l % kLeafGroup;
    for (int a = 0; a < 3; ++a) {
      group[a * kLeafGroup] = std::numeric_limits<std::int16_t>::max();
      group[(3 + a) * kLeafGroup] = std::numeric_limits<std::int16_t>::min();
    }
  }
  // Leaf boxes: the kD build's leaf bounds.
  auto* leaf_start = const_cast<std::uint16_t*>(c->leafStart());
  for (int l = 0; l < leaves; ++l) {
    const KdLeaf& leaf = m_kd.leaves[std::size_t(l)];
    leaf_start[l] = std::uint16_t(leaf.first);
    std::int16_t* group = boxes + 6 * kLeafGroup * (l / kLeafGroup) + l % kLeafGroup;
    for (int a = 0; a < 3; ++a) {
      group[a * kLeafGroup] = leaf.min[std::size_t(a)];
      group[(3 + a) * kLeafGroup] = leaf.max[std::size_t(a)];
    }
  }
  leaf_start[leaves] = std::uint16_t(triangles);

  auto* positions = const_cast<std::int16_t*>(c->positions());
  for (int v = 0; v < mesh.vertex_count; ++v) {
    const std::int32_t r = remap[v];
    if (r < 0) continue;
    const mesher::Vertex& p = vertices_in[v];
    positions[r] = p.x;
    positions[r + 1] = p.y;
    positions[r + 2] = p.z;
  }
  std::uint16_t* corners[3] = {const_cast<std::uint16_t*>(c->corner(0)), const_cast<std::uint16_t*>(c->corner(1)),
                               const_cast<std::uint16_t*>(c->corner(2))};
  std::fill_n(corners[2] + triangles, kCornerPadding, std::uint16_t(0));
  auto* materials = const_cast<std::uint8_t*>(c->materials());
  // The arrays read by pointer: the byte stores below may alias any vector's data pointer, which would be reloaded.
  const std::uint16_t* order = m_kd.order.data();
  const std::uint8_t* mesh_materials = mesh.materials.data();
  auto fill = [&](auto flags_of) {
    for (int i = 0; i < triangles; ++i) {
      const std::uint16_t t = order[i];
      const unsigned flags = flags_of(t);
      corners[0][i] = std::uint16_t(remap[indices[3 * t]] | (flags & 1u) << 15);
      corners[1][i] = std::uint16_t(remap[indices[3 * t + 1]] | (flags >> 1 & 1u) << 15);
      corners[2][i] = std::uint16_t(remap[indices[3 * t + 2]] | (flags >> 2 & 1u) << 15);
      materials[i] = mesh_materials[t];
    }
  };
  if (use == ColliderUse::kContacts) {
    m_edge_flags.resize(std::size_t(triangles));
    computeEdgeFlags(mesh, m_edge_flags, *m_edge_scratch);
    c->m_has_edge_flags = true;
    const std::uint8_t* edge_flags = m_edge_flags.data();
    fill([edge_flags](std::uint16_t t) { return unsigned(edge_flags[t]); });
  } else {
    fill([](std::uint16_t) { return 0u; });
  }
  return c;
}

}  // namespace vtp::physics
