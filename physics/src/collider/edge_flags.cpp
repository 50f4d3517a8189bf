#include "collider/edge_flags.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

namespace vtp::physics {
namespace {

// The quad path's cells: those of the wide apron's 12^3 box, -2..8 on each axis (a vertex at p lies in cell
// (p - 512) >> 10: the mesher keeps it 1..1023 grid units past the centre of its cell's lowest voxel), named by their
// coordinates from 0 packed 4 bits apart, x + 16 y + 256 z. Each is in 0..10, so two cells' names differ by +-1, +-16
// or +-256 exactly when the cells are face neighbours.
constexpr int kCellOffset = mesher::kWideApron;
constexpr int kCellSide = mesher::boxSide(mesher::kWideApron) - 1;
static_assert(kCellSide <= 16, "cell coordinates are packed 4 bits apart");
constexpr int kCells = 16 * 16 * kCellSide;  // names 0 .. 2730 and a little slack
constexpr int kDirections = 6;                 // +x, -x, +y, -y, +z, -z: direction d ^ 1 is d's opposite
constexpr int kDirectionBits = 3;              // a half-edge's table entry: its start cell << 3 | its direction
constexpr unsigned kDirectionMask = (1u << kDirectionBits) - 1;
static_assert(kDirections <= 1 << kDirectionBits);
// The direction of a step from one cell to another, by the difference of their names offset by kCells, or kNotFace.
constexpr std::uint8_t kNotFace = 0xFF;
constexpr std::array<std::uint8_t, 2 * kCells> kStepDirection = [] {
  std::array<std::uint8_t, 2 * kCells> d{};
  d.fill(kNotFace);
  d[kCells + 1] = 0, d[kCells - 1] = 1, d[kCells + 16] = 2, d[kCells - 16] = 3;
  d[kCells + 256] = 4, d[kCells - 256] = 5;
  return d;
}();

// A vertex as int32 lanes x, y, z, pad (one 8-byte load).
inline __m128i vertexLanes(const mesher::Vertex& v) {
  return _mm_cvtepi16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(&v)));
}

// Lanes 0-2 of v added up (exact for the integers below 2^53 these hold, so in any order).
inline double sum3(__m256d v) {
  const __m128d lo = _mm256_castpd256_pd128(v), hi = _mm256_extractf128_pd(v, 1);
  return _mm_cvtsd_f64(_mm_add_sd(_mm_add_sd(lo, _mm_unpackhi_pd(lo, lo)), hi));
}

// Every triangle's normal and its squared length, exact in double (components below 2^23: a mesher's triangle spans
// at most two cells, so its edges are below 2^11 a component; the dot products below, below 2^48, are exact too).
// Other input may wrap the int32 lanes (no undefined behaviour in the intrinsics) and flag edges wrongly; the builder
// refuses owned vertices outside the mesher's range, which the queries need.
void computeNormals(const mesher::ChunkMesh& mesh, std::vector<double>& normals) {
  const std::uint16_t* idx = mesh.indices.data();
  const mesher::Vertex* pos = mesh.vertices.data();
  normals.resize(4 * std::size_t(mesh.triangle_count));
  double* n = normals.data();
  for (int t = 0; t < mesh.triangle_count; ++t, n += 4) {
    const __m128i p0 = vertexLanes(pos[idx[3 * t]]);
    const __m128i u = _mm_sub_epi32(vertexLanes(pos[idx[3 * t + 1]]), p0);
    const __m128i v = _mm_sub_epi32(vertexLanes(pos[idx[3 * t + 2]]), p0);
    // u x v = u.yzx v.zxy - u.zxy v.yzx; lane 3 is u.w v.w - u.w v.w = 0 whatever the pads hold.
    constexpr int kYzx = _MM_SHUFFLE(3, 0, 2, 1), kZxy = _MM_SHUFFLE(3, 1, 0, 2);
    const __m128i cross = _mm_sub_epi32(_mm_mullo_epi32(_mm_shuffle_epi32(u, kYzx), _mm_shuffle_epi32(v, kZxy)),
                                        _mm_mullo_epi32(_mm_shuffle_epi32(u, kZxy), _mm_shuffle_epi32(v, kYzx)));
    const __m256d normal = _mm256_cvtepi32_pd(cross);
    const double length2 = sum3(_mm256_mul_pd(normal, normal));
    _mm256_storeu_pd(n, _mm256_blend_pd(normal, _mm256_set1_pd(length2), 8));
  }
}

// The one test both paths apply to an edge with a single neighbour: the edge from vertex `from` of a triangle with
// normal n is active when the neighbour u (its corner off the edge: `apex`) bends away below the face (convex) by
// kFlatEdgeAngle or more. n.m > cos(angle) |n| |m| is squared to avoid the roots; the products are grouped so the
// answer is the same from either triangle of the edge (convexity is: both sides' triple products are one volume).
class EdgeTest {
 public:
  EdgeTest(const mesher::ChunkMesh& mesh, const std::vector<double>& normals)
      : m_pos(mesh.vertices.data()), m_normals(normals.data()) {}
  const double* normal(std::uint32_t t) const { return m_normals + 4 * t; }
  bool active(const double* n, std::uint16_t from, std::uint32_t u, std::uint16_t apex) const {
    // The same sums and products as in scalar code: side and n.m are exact; lane 3 of n * m is |n|^2 |m|^2.
    const __m256d nv = _mm256_loadu_pd(n);
    const __m128i to_apex = _mm_blend_epi32(_mm_sub_epi32(vertexLanes(m_pos[apex]), vertexLanes(m_pos[from])),
                                            _mm_setzero_si128(), 8);
    const double side = sum3(_mm256_mul_pd(_mm256_cvtepi32_pd(to_apex), nv));
    const __m256d products = _mm256_mul_pd(nv, _mm256_loadu_pd(normal(u)));
    const double nm = sum3(products);
    const __m128d high = _mm256_extractf128_pd(products, 1);
    const double lengths2 = _mm_cvtsd_f64(_mm_unpackhi_pd(high, high));
    return (side < 0) & ((nm <= 0) | (nm * nm < m_cos2 * lengths2));
  }

 private:
  const mesher::Vertex* m_pos;
  const double* m_normals;
  double m_cos2 = std::cos(kFlatEdgeAngle) * std::cos(kFlatEdgeAngle);
};

// The corner of triangle edge j's triangle that is off edge j (corner j to j + 1).
constexpr std::uint32_t kApexCorner[3] = {2, 0, 1};

}  // namespace

EdgeFlagScratch::EdgeFlagScratch()
    : outer_edges(std::size_t(kCells << kDirectionBits), 0),
      cell_used(std::size_t(kCells), 0),
      square_used(std::size_t(3 * kCells), 0) {}


namespace {

// The quad path's stages. Each vertex's cell into scratch.vertex_cell; false when one lies outside the box's cells or
// shares its cell (never for the mesher's output, so the branch predicts).
bool vertexCells(const mesher::ChunkMesh& mesh, EdgeFlagScratch& scratch) {
  const mesher::Vertex* pos = mesh.vertices.data();
  scratch.vertex_cell.resize(std::size_t(mesh.vertex_count));
  std::uint16_t* cell = scratch.vertex_cell.data();
  std::uint8_t* used = scratch.cell_used.data();
  int v = 0;
  for (; v < mesh.vertex_count; ++v) {
    const int x = ((pos[v].x - 512) >> 10) + kCellOffset, y = ((pos[v].y - 512) >> 10) + kCellOffset,
              z = ((pos[v].z - 512) >> 10) + kCellOffset;
    const bool inside = (unsigned(x) < unsigned(kCellSide)) & (unsigned(y) < unsigned(kCellSide)) &
                        (unsigned(z) < unsigned(kCellSide));
    const int c = x | y << 4 | z << 8;
    if (!inside || used[c]) break;
    used[c] = 1;
    cell[v] = std::uint16_t(c);
  }
  for (int w = 0; w < v; ++w) used[cell[w]] = 0;
  return v == mesh.vertex_count;
}

// Quads: triangles 2q = (a, b, c) and 2q + 1 = (a, c, d), diagonal a-c, whose cells a, b, c, d go round a unit square
// (steps along one axis, then another, then back along each), no two quads on one square: a diagonal then belongs to
// one quad alone. The outer half-edges a->b, b->c (edges 0 and 1 of 2q) and c->d, d->a (edges 1 and 2 of 2q + 1) go
// into scratch.outer_edges, counted by start cell and direction (an entry is the count << 16 | the last half-edge as
// triangle << 2 | edge); scratch.written keeps each quad's 4 entries. Returns how many quads went in (all of them
// exactly when the mesh has the structure); clearQuads takes them out.
int addQuads(const mesher::ChunkMesh& mesh, EdgeFlagScratch& scratch) {
  const int triangles = mesh.triangle_count;
  if ((triangles & 1) || triangles >= (1 << 14)) return 0;  // pairs; half-edge numbers fit 16 bits
  const std::uint16_t* idx = mesh.indices.data();
  const std::uint16_t* cell = scratch.vertex_cell.data();
  scratch.written.resize(2 * std::size_t(triangles));
  scratch.squares.resize(std::size_t(triangles / 2));
  std::uint16_t* written = scratch.written.data();
  std::uint16_t* squares = scratch.squares.data();
  std::uint8_t* square_used = scratch.square_used.data();
  std::uint32_t* outer = scratch.outer_edges.data();
  // From the cells' names (read once: the stores below may alias them as far as the compiler knows).
  auto step = [](unsigned from, unsigned to) { return unsigned(kStepDirection[to - from + kCells]); };
  auto add = [&](unsigned from, unsigned direction, std::uint32_t half_edge) {
    const unsigned key = from << kDirectionBits | direction;
    outer[key] = ((outer[key] >> 16) + 1) << 16 | half_edge;
    return std::uint64_t(key);
  };
  int q = 0;
  for (; q < triangles / 2; ++q) {
    const std::uint16_t* t = idx + 6 * q;
    const std::uint16_t a = t[0], c = t[2];
    const unsigned na = cell[a], nb = cell[t[1]], nc = cell[c], nd = cell[t[5]];  // the cells' names
    const unsigned ab = step(na, nb), bc = step(nb, nc), cd = step(nc, nd), da = step(nd, na);
    const bool square = (t[3] == a) & (t[4] == c) & (ab != kNotFace) & (bc != kNotFace) & (cd == (ab ^ 1u)) &
                        (da == (bc ^ 1u)) & ((ab >> 1) != (bc >> 1));
    if (!square) break;
    // The square by its lowest cell (the smallest name) and the axis across it.
    const unsigned name = std::min(std::min(na, nb), std::min(nc, nd)) * 3u + (3 - (ab >> 1) - (bc >> 1));
    if (square_used[name]) break;
    square_used[name] = 1;
    squares[q] = std::uint16_t(name);
    const std::uint32_t t0 = 8 * std::uint32_t(q), t1 = t0 + 4;  // triangles 2q and 2q + 1, shifted by 2
    const std::uint64_t keys = add(na, ab, t0) | add(nb, bc, t0 + 1) << 16 | add(nc, cd, t1 + 1) << 32 |
                               add(nd, da, t1 + 2) << 48;
    std::memcpy(written + 4 * q, &keys, sizeof keys);
  }
  return q;
}

void clearQuads(int quads, EdgeFlagScratch& scratch) {
  for (int q = 0; q < quads; ++q) {
    scratch.square_used[scratch.squares[std::size_t(q)]] = 0;
    for (int k = 0; k < 4; ++k) scratch.outer_edges[scratch.written[4 * std::size_t(q) + std::size_t(k)]] = 0;
  }
}

// The owned quads' flags from the tables. Outer edge from -> to: its twin to -> from is the one half-edge leaving to's
// cell towards from's (with a vertex per cell, every half-edge leaving that way is a to -> from). An edge with one
// half-edge each way is tested once, from the half-edge along +x, +y or +z, for both triangles (the test gives the
// same answer from either); any other half-edge with a single twin, and one whose twin is not owned (a seam edge), is
// tested from its own side. Flags are ORed into zeros, in any order.
void classifyQuads(const mesher::ChunkMesh& mesh, std::span<std::uint8_t> flags, EdgeFlagScratch& scratch) {
  const int owned = mesh.owned_triangle_count;
  const std::uint16_t* idx = mesh.indices.data();
  const std::uint16_t* cell = scratch.vertex_cell.data();
  const std::uint32_t* outer = scratch.outer_edges.data();
  computeNormals(mesh, scratch.normals);
  const EdgeTest test(mesh, scratch.normals);
  std::fill(flags.begin(), flags.begin() + owned, std::uint8_t(0));
  // Half-edge k of triangle t, from -> to; `key` is its own entry. Returns its bit for flags[t]; sets its twin's in
  // flags[u] when it tests for both.
  auto outerEdge = [&](std::uint32_t t, unsigned k, std::uint16_t from, std::uint16_t to, unsigned key) {
    const unsigned direction = (key & kDirectionMask) ^ 1u;  // to -> from
    const std::uint32_t back = outer[unsigned(cell[to]) << kDirectionBits | direction];
    const std::uint32_t u = (back & 0xFFFFu) >> 2, j = back & 3u;
    const bool forward = direction & 1u;  // from -> to is along +x, +y or +z
    const bool shared = (outer[key] >> 16 == 1) & (u < std::uint32_t(owned));
    if (back >> 16 != 1) return 1u << k;
    if (!forward && shared) return 0u;  // tested from the twin
    const unsigned active = test.active(test.normal(t), from, u, idx[3 * u + kApexCorner[j]]);
    if (forward & shared) flags[u] = std::uint8_t(flags[u] | active << j);
    return active << k;
  };
  const std::uint16_t* keys = scratch.written.data();
  for (int q = 0; q < owned / 2; ++q) {
    const std::uint16_t* t = idx + 6 * q;
    const std::uint16_t a = t[0], b = t[1], c = t[2], d = t[5];
    const std::uint16_t* key = keys + 4 * q;
    const unsigned key0 = key[0], key1 = key[1], key2 = key[2], key3 = key[3];
    const std::uint32_t t0 = 2 * std::uint32_t(q), t1 = t0 + 1;
    const unsigned diagonal = unsigned(test.active(test.normal(t0), c, t1, d));  // the same from t1
    const unsigned f0 = diagonal << 2 | outerEdge(t0, 0, a, b, key0) | outerEdge(t0, 1, b, c, key1);
    const unsigned f1 = diagonal | outerEdge(t1, 1, c, d, key2) | outerEdge(t1, 2, d, a, key3);
    // ORed: an earlier quad may have set a twin's bit here.
    flags[t0] = std::uint8_t(flags[t0] | f0);
    flags[t1] = std::uint8_t(flags[t1] | f1);
  }
}

}  // namespace

bool quadEdgeFlags(const mesher::ChunkMesh& mesh, std::span<std::uint8_t> flags, EdgeFlagScratch& scratch) {
  const int owned = mesh.owned_triangle_count;
  if ((owned & 1) || flags.size() < std::size_t(owned) || !vertexCells(mesh, scratch)) return false;
  const int added = addQuads(mesh, scratch);
  const bool quads = added == mesh.triangle_count / 2 && mesh.triangle_count % 2 == 0;
  if (quads) classifyQuads(mesh, flags, scratch);
  clearQuads(added, scratch);
  return quads;
}

void generalEdgeFlags(const mesher::ChunkMesh& mesh, std::span<std::uint8_t> flags, EdgeFlagScratch& scratch) {
  const auto vertices = std::size_t(mesh.vertex_count), triangles = std::size_t(mesh.triangle_count);
  const std::size_t owned = std::min(std::size_t(mesh.owned_triangle_count), flags.size());
  const std::uint16_t* idx = mesh.indices.data();
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
  computeNormals(mesh, scratch.normals);
  const EdgeTest test(mesh, scratch.normals);

  // Each edge shared by two owned triangles is classified once, from its first triangle, for both (the test gives
  // the same answer from either; bit 3 + k of a flag byte marks edge k done; cleared at the end).
  std::fill(flags.begin(), flags.begin() + std::ptrdiff_t(owned), std::uint8_t(0));
  for (std::size_t t = 0; t < owned; ++t) {
    const double* n = test.normal(std::uint32_t(t));
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
      const bool active = test.active(n, a, u, idx[3 * u + kApexCorner[j]]);
      flags[t] = std::uint8_t(flags[t] | unsigned(active) << k);
      if (u < owned && u != t) flags[u] = std::uint8_t(flags[u] | (unsigned(active) << j) | (8u << j));
    }
  }
  for (std::size_t t = 0; t < owned; ++t) flags[t] &= 7u;
}

void computeEdgeFlags(const mesher::ChunkMesh& mesh, std::span<std::uint8_t> flags, EdgeFlagScratch& scratch) {
  if (!quadEdgeFlags(mesh, flags, scratch)) generalEdgeFlags(mesh, flags, scratch);
}

}  // namespace vtp::physics
