#include "edge_flags.h"

#include <cmath>

namespace vtp::physics {
namespace {

struct V64 {
  std::int64_t x, y, z;
};
V64 sub(const mesher::Vertex& a, const mesher::Vertex& b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
V64 cross(const V64& a, const V64& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
std::int64_t dot(const V64& a, const V64& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

}  // namespace

void computeEdgeFlags(const mesher::ChunkMesh& mesh, std::span<std::uint8_t> flags, std::vector<std::uint32_t>& scratch) {
  const auto vertices = std::size_t(mesh.vertex_count), triangles = std::size_t(mesh.triangle_count);
  const std::uint16_t* idx = mesh.indices.data();
  // Half-edges grouped by start vertex (a counting sort): scratch = [starts (vertices + 1) | edges (3 triangles)],
  // an edge stored as 3 * triangle + k.
  scratch.assign(vertices + 1 + 3 * triangles, 0);
  std::uint32_t* start = scratch.data();
  std::uint32_t* edges = start + vertices + 1;
  for (std::size_t i = 0; i < 3 * triangles; ++i) ++start[idx[i] + 1];
  for (std::size_t v = 0; v < vertices; ++v) start[v + 1] += start[v];
  for (std::size_t i = 0; i < 3 * triangles; ++i) edges[start[idx[i]]++] = std::uint32_t(i);
  for (std::size_t v = vertices; v > 0; --v) start[v] = start[v - 1];
  start[0] = 0;

  const double cos_flat = std::cos(kFlatEdgeAngle);
  auto corner = [&](std::size_t t, int k) { return idx[3 * t + std::size_t(k % 3)]; };
  for (std::size_t t = 0; t < std::size_t(mesh.owned_triangle_count) && t < flags.size(); ++t) {
    std::uint8_t f = 0;
    const mesher::Vertex &p0 = mesh.vertices[corner(t, 0)], &p1 = mesh.vertices[corner(t, 1)],
                         &p2 = mesh.vertices[corner(t, 2)];
    const V64 n = cross(sub(p1, p0), sub(p2, p0));
    for (int k = 0; k < 3; ++k) {
      const std::uint16_t a = corner(t, k), b = corner(t, k + 1);
      // The neighbour: the half-edge b -> a.
      int found = 0;
      std::uint32_t twin = 0;
      for (std::uint32_t e = start[b]; e < start[b + 1]; ++e) {
        const std::uint32_t h = edges[e];
        if (corner(h / 3, int(h % 3) + 1) == a) ++found, twin = h;
      }
      bool active = true;
      if (found == 1) {
        const std::size_t u = twin / 3;
        const mesher::Vertex& apex = mesh.vertices[corner(u, int(twin % 3) + 2)];
        const mesher::Vertex &q0 = mesh.vertices[corner(u, 0)], &q1 = mesh.vertices[corner(u, 1)],
                             &q2 = mesh.vertices[corner(u, 2)];
        const V64 m = cross(sub(q1, q0), sub(q2, q0));
        const bool convex = dot(sub(apex, mesh.vertices[a]), n) < 0;
        const double len = std::sqrt(double(dot(n, n))) * std::sqrt(double(dot(m, m)));
        active = convex && double(dot(n, m)) < cos_flat * len;
      }
      if (active) f = std::uint8_t(f | (1u << k));
    }
    flags[t] = f;
  }
}

}  // namespace vtp::physics
