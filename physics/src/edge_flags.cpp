#include "edge_flags.h"

#include <immintrin.h>

#include <bit>
#include <cmath>

namespace vtp::physics {
namespace {

V64 sub(const mesher::Vertex& a, const mesher::Vertex& b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
V64 cross(const V64& a, const V64& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
std::int64_t dot(const V64& a, const V64& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

}  // namespace

void computeEdgeFlags(const mesher::ChunkMesh& mesh, std::span<std::uint8_t> flags, EdgeFlagScratch& scratch) {
  const auto vertices = std::size_t(mesh.vertex_count), triangles = std::size_t(mesh.triangle_count);
  const std::size_t owned = std::min(std::size_t(mesh.owned_triangle_count), flags.size());
  const std::uint16_t* idx = mesh.indices.data();
  const mesher::Vertex* pos = mesh.vertices.data();
  // Half-edges grouped by start vertex (a counting sort), each entry its end vertex << 16 | its number 3 t + k
  // (both below 2^16: at most 1331 vertices and 6000 triangles).
  scratch.starts.assign(vertices + 1, 0);
  scratch.half_edges.resize(3 * triangles + 8);  // 8 more: the twin search loads 8 at a time
  std::uint32_t* start = scratch.starts.data();
  std::uint32_t* edges = scratch.half_edges.data();
  for (std::size_t i = 0; i < 3 * triangles; ++i) ++start[idx[i] + 1];
  for (std::size_t v = 0; v < vertices; ++v) start[v + 1] += start[v];
  for (std::size_t t = 0; t < triangles; ++t) {
    for (std::size_t k = 0; k < 3; ++k) {
      const std::uint16_t a = idx[3 * t + k], b = idx[3 * t + (k + 1) % 3];
      edges[start[a]++] = std::uint32_t(b) << 16 | std::uint32_t(3 * t + k);
    }
  }
  for (std::size_t v = vertices; v > 0; --v) start[v] = start[v - 1];
  start[0] = 0;
  // Every triangle's normal (exact integers, below 2^23 a component: a triangle spans at most two cells, so its edges
  // are below 2^11 a component).
  scratch.normals.resize(triangles);
  for (std::size_t t = 0; t < triangles; ++t) {
    const mesher::Vertex &p0 = pos[idx[3 * t]], &p1 = pos[idx[3 * t + 1]], &p2 = pos[idx[3 * t + 2]];
    scratch.normals[t] = cross(sub(p1, p0), sub(p2, p0));
  }

  // An edge bends by less than kFlatEdgeAngle when n.m > cos(angle) |n| |m|, squared to avoid the roots (the dot
  // products are exact in int64, below 2^48, and so in the doubles they are converted to).
  const double cos2 = std::cos(kFlatEdgeAngle) * std::cos(kFlatEdgeAngle);
  // Each edge shared by two owned triangles is classified once, from its first triangle, for both (bit 3 + k of a
  // flag byte marks edge k done; cleared at the end).
  std::fill(flags.begin(), flags.begin() + std::ptrdiff_t(owned), std::uint8_t(0));
  for (std::size_t t = 0; t < owned; ++t) {
    const V64& n = scratch.normals[t];
    const double nn = double(dot(n, n));
    for (unsigned k = 0; k < 3; ++k) {
      if (flags[t] >> (3 + k) & 1u) continue;
      const std::uint16_t a = idx[3 * t + k], b = idx[3 * t + (k + 1) % 3];
      // The neighbour: the one half-edge b -> a (none, or several around a non-manifold edge: active). The half-edges
      // from b are compared 8 at a time (one step for nearly every vertex), so the search has no data-dependent
      // branch; lanes past b's last are masked.
      int found = 0;
      std::uint32_t twin = 0;
      const __m256i want = _mm256_set1_epi32(a);
      for (std::uint32_t e = start[b], last = start[b + 1]; e < last; e += 8) {
        const __m256i ends = _mm256_srli_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(edges + e)), 16);
        const __m256i hit = _mm256_cmpeq_epi32(ends, want);
        const unsigned match = _bzhi_u32(unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(hit))), last - e);
        found += std::popcount(match);
        twin = match != 0 ? edges[e + std::uint32_t(std::countr_zero(match))] & 0xFFFFu : twin;
      }
      if (found != 1) {
        flags[t] = std::uint8_t(flags[t] | (1u << k));
        continue;
      }
      const std::uint32_t u = twin / 3, j = twin - 3 * u;
      const std::uint16_t apex = idx[3 * u + (j + 2) % 3];
      bool active = false;
      if (dot(sub(pos[apex], pos[a]), n) < 0) {  // the neighbour bends away below this face: convex
        const V64& m = scratch.normals[u];
        const double nm = double(dot(n, m));
        active = nm <= 0 || nm * nm < cos2 * nn * double(dot(m, m));
      }
      flags[t] = std::uint8_t(flags[t] | unsigned(active) << k);
      // Convexity and the angle are symmetric: the neighbour's edge j gets the same answer.
      if (u < owned && u != t) flags[u] = std::uint8_t(flags[u] | (unsigned(active) << j) | (8u << j));
    }
  }
  for (std::size_t t = 0; t < owned; ++t) flags[t] &= 7u;
}

}  // namespace vtp::physics
