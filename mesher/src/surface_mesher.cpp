// Surface nets over one chunk box, with bit-mask edge detection (whole rows of 8..12 voxels per operation) and integer
// occupancy-weighted vertices. The rules are stated in surface_mesher.h; this file is about doing them fast:
//   1. weights: one AVX2 pass turns voxels into weights e (occupancy if solid, else 0) and detects the all-outside and
//      all-inside boxes (no triangles) on the way;
//   2. rows: the inside bits of each (y, z) row of the box, read from the weights' sign bits (e >= 128 is inside);
//   3. edges and cells: XORs of neighbouring rows give the active edges of a whole row at once; ORs of shifted edge
//      rows give the cells whose vertices the quads need;
//   4. vertices: each needed cell averages the crossings of its active edges, from a per-pattern edge table;
//   5. quads: each owned active edge joins its 4 cells' vertices, split along the shorter diagonal.
#include "vtp/mesher/surface_mesher.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "cell_table.h"

namespace vtp::mesher {

namespace {

constexpr int kMaxSide = boxSide(kWideApron);
constexpr int kMaxVolume = boxVolume(kWideApron);

// Floor division of sums of up to 12 crossings (each <= 256) by their count, as a multiply and shift: exact because
// sum * (ceil(2^16 / n) n - 2^16) < 2^16 for every sum <= 3072 and n <= 12.
constexpr std::uint32_t kReciprocal[13] = {0,        65536,    32768,    21846,    16384,    13108,   10923,
                                           9363,     8192,     7282,     6554,     5958,     5462};

}  // namespace

// Scratch memory for one box, reused across calls. Weights are padded so 16-byte row loads never leave the array.
struct SurfaceMesher::Scratch {
  alignas(32) std::uint8_t weight[kMaxVolume + 32];
  std::uint16_t inside_rows[kMaxSide * kMaxSide];  // row y + side z, bit x: voxel (x, y, z) is inside
  std::uint16_t edge_rows[3][kMaxSide * kMaxSide];  // bit x: the edge from (x, y, z) along the axis is active
  std::uint16_t cell_rows[kMaxSide * kMaxSide];     // bit x: cell (x, y, z) has a vertex some quad uses
  std::uint16_t cell_vertex[kMaxVolume];            // vertex index of each needed cell (others stale)
};

ChunkMesh::ChunkMesh()
    : vertices(kMaxWideVertices), indices(3 * std::size_t(kMaxWideTriangles)), materials(kMaxWideTriangles) {}

SurfaceMesher::SurfaceMesher() : m_scratch(std::make_unique<Scratch>()) {}
SurfaceMesher::~SurfaceMesher() = default;

namespace {

// Step 1: weights, and whether every voxel is outside (OR of weights < 128) or inside (AND of weights >= 128).
// Returns true when the box has both inside and outside voxels.
bool computeWeights(const terrain::Voxel* box, int volume, std::uint8_t* weight) {
  const __m256i low_bits = _mm256_set1_epi16(0x00FE);
  __m256i any = _mm256_setzero_si256(), all = _mm256_set1_epi8(-1);
  int i = 0;
  for (; i + 32 <= volume; i += 32) {
    // Voxels as u16 lanes: material in the low byte, occupancy in the high byte. Material >= 2 <=> (v & 0xFE) != 0.
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(box + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(box + i + 16));
    const __m256i wa = _mm256_andnot_si256(_mm256_cmpeq_epi16(_mm256_and_si256(a, low_bits), _mm256_setzero_si256()),
                                           _mm256_srli_epi16(a, 8));
    const __m256i wb = _mm256_andnot_si256(_mm256_cmpeq_epi16(_mm256_and_si256(b, low_bits), _mm256_setzero_si256()),
                                           _mm256_srli_epi16(b, 8));
    const __m256i w = _mm256_permute4x64_epi64(_mm256_packus_epi16(wa, wb), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(weight + i), w);
    any = _mm256_or_si256(any, w);
    all = _mm256_and_si256(all, w);
  }
  std::uint8_t tail_any = 0, tail_all = 0xFF;
  for (; i < volume; ++i) {
    const terrain::Voxel v = box[i];
    const std::uint8_t w = terrain::isSolidMaterial(v.material) ? v.occupancy : 0;
    weight[i] = w;
    tail_any |= w;
    tail_all &= w;
  }
  const bool some_inside = _mm256_movemask_epi8(any) != 0 || (tail_any & 0x80) != 0;
  const bool some_outside = unsigned(_mm256_movemask_epi8(all)) != 0xFFFFFFFFu || (tail_all & 0x80) == 0;
  return some_inside && some_outside;
}

// Step 2: inside bits per row, from the weights' sign bits.
void computeInsideRows(const std::uint8_t* weight, int side, std::uint16_t* rows) {
  const unsigned row_mask = (1u << side) - 1;
  for (int r = 0; r < side * side; ++r) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(weight + r * side));
    rows[r] = std::uint16_t(unsigned(_mm_movemask_epi8(w)) & row_mask);
  }
}

}  // namespace

Result<int> SurfaceMesher::mesh(std::span<const terrain::Voxel> box, int apron, ChunkMesh& out) {
  out.vertex_count = out.triangle_count = out.owned_triangle_count = 0;
  if (apron != kApron && apron != kWideApron) {
    return Error{ErrorCode::kInvalidArgument, "mesh: apron must be 1 or 2 voxels", {}};
  }
  if (box.size() != std::size_t(boxVolume(apron))) {
    return Error{ErrorCode::kInvalidArgument, "mesh: box must hold (8 + 2 apron)^3 voxels", {}};
  }
  // Buffers a caller shrank are regrown once; in steady state this allocates nothing.
  if (out.vertices.size() < std::size_t(kMaxWideVertices)) out.vertices.resize(kMaxWideVertices);
  if (out.indices.size() < 3 * std::size_t(kMaxWideTriangles)) out.indices.resize(3 * std::size_t(kMaxWideTriangles));
  if (out.materials.size() < std::size_t(kMaxWideTriangles)) out.materials.resize(kMaxWideTriangles);

  Scratch& s = *m_scratch;
  const int side = boxSide(apron), volume = boxVolume(apron);
  if (!computeWeights(box.data(), volume, s.weight)) return 0;
  computeInsideRows(s.weight, side, s.inside_rows);

  // Step 3. Edges are meshed for lower voxels in [lo, hi) on every axis: the chunk, or with the wide apron the chunk
  // plus one voxel (the neighbours' triangles come second, after the owned ones).
  const int lo = 1, hi = side - 1;
  const int own_lo = apron, own_hi = apron + kChunkSize;
  const int plane = side * side;
  const unsigned x_mask = ((1u << hi) - 1) & ~((1u << lo) - 1);
  std::fill_n(s.cell_rows, plane, std::uint16_t(0));
  const std::uint16_t* in = s.inside_rows;
  for (int z = lo; z < hi; ++z) {
    for (int y = lo; y < hi; ++y) {
      const int r = y + side * z;
      const unsigned ex = (in[r] ^ (in[r] >> 1)) & x_mask;
      const unsigned ey = (in[r] ^ in[r + 1]) & x_mask;
      const unsigned ez = (in[r] ^ in[r + side]) & x_mask;
      s.edge_rows[0][r] = std::uint16_t(ex);
      s.edge_rows[1][r] = std::uint16_t(ey);
      s.edge_rows[2][r] = std::uint16_t(ez);
      // The cells around an edge from (x, y, z): x-edges touch cells x, y-1..y, z-1..z; y-edges x-1..x, y, z-1..z;
      // z-edges x-1..x, y-1..y, z.
      const unsigned cy = ey | (ey >> 1), cz = ez | (ez >> 1);
      s.cell_rows[r] |= std::uint16_t(ex | cy | cz);
      s.cell_rows[r - 1] |= std::uint16_t(ex | cz);
      s.cell_rows[r - side] |= std::uint16_t(ex | cy);
      s.cell_rows[r - 1 - side] |= std::uint16_t(ex);
    }
  }

  // Step 4: vertices of the needed cells, in box order.
  int vertex_count = 0;
  Vertex* vertices = out.vertices.data();
  const int corner_offset[8] = {0, 1, side, side + 1, plane, plane + 1, plane + side, plane + side + 1};
  for (int z = 0; z + 1 < side; ++z) {
    for (int y = 0; y + 1 < side; ++y) {
      const int r = y + side * z;
      unsigned cells = s.cell_rows[r];
      if (cells == 0) continue;
      const unsigned r00 = in[r], r01 = in[r + 1], r10 = in[r + side], r11 = in[r + side + 1];
      while (cells != 0) {
        const int x = std::countr_zero(cells);
        cells &= cells - 1;
        const unsigned pattern = ((r00 >> x) & 3) | (((r01 >> x) & 3) << 2) | (((r10 >> x) & 3) << 4) |
                                 (((r11 >> x) & 3) << 6);
        const CellPattern& cp = kCellPatterns[pattern];
        const int base = x + r * side;
        int sum[3] = {cp.constant[0], cp.constant[1], cp.constant[2]};
        for (unsigned edges = cp.active; edges != 0; edges &= edges - 1) {
          const int e = std::countr_zero(edges);
          const int pair = s.weight[base + corner_offset[kCellEdges[e].lo]] + s.weight[base + corner_offset[kCellEdges[e].hi]];
          sum[kCellEdges[e].axis] += ((cp.lower_inside >> e) & 1) ? pair : -pair;
        }
        const std::uint32_t reciprocal = kReciprocal[cp.count];
        const int cell[3] = {x, y, z};
        Vertex& v = vertices[vertex_count];
        std::int16_t* coord[3] = {&v.x, &v.y, &v.z};
        for (int a = 0; a < 3; ++a) {
          const int mean = int((std::uint32_t(sum[a]) * reciprocal) >> 16);
          *coord[a] = std::int16_t(kPositionScale * (cell[a] - apron) + kPositionScale / 2 + std::clamp(mean, 1, 255));
        }
        s.cell_vertex[base] = std::uint16_t(vertex_count++);
      }
    }
  }
  out.vertex_count = vertex_count;

  // Step 5: quads, owned edges first.
  const int cell_step[3][4] = {
      {-side - plane, -plane, 0, -side},  // x-edge: (y, z) offsets (-1,-1) (0,-1) (0,0) (-1,0)
      {-plane - 1, -1, 0, -plane},        // y-edge: (z, x) offsets
      {-1 - side, -side, 0, -1},          // z-edge: (x, y) offsets
  };
  const int axis_step[3] = {1, side, plane};
  std::uint16_t* indices = out.indices.data();
  std::uint8_t* materials = out.materials.data();
  int tri = 0;
  const unsigned own_x = ((1u << own_hi) - 1) & ~((1u << own_lo) - 1);
  auto emit = [&](bool owned) {
    for (int z = lo; z < hi; ++z) {
      for (int y = lo; y < hi; ++y) {
        const int r = y + side * z;
        const bool own_row = y >= own_lo && y < own_hi && z >= own_lo && z < own_hi;
        const unsigned keep = own_row ? (owned ? own_x : ~own_x) : (owned ? 0u : ~0u);
        for (int a = 0; a < 3; ++a) {
          for (unsigned edges = s.edge_rows[a][r] & keep; edges != 0; edges &= edges - 1) {
            const int x = std::countr_zero(edges);
            const int p = x + r * side;
            const bool lower_inside = (in[r] >> x) & 1;
            std::uint16_t q[4];
            for (int k = 0; k < 4; ++k) q[k] = s.cell_vertex[p + cell_step[a][k]];
            if (!lower_inside) std::swap(q[1], q[3]);
            const terrain::Voxel solid = box[lower_inside ? p : p + axis_step[a]];
            auto at = [&](int k) { return vertices[q[k]]; };
            auto dist2 = [](Vertex u, Vertex w) {
              const int dx = u.x - w.x, dy = u.y - w.y, dz = u.z - w.z;
              return dx * dx + dy * dy + dz * dz;
            };
            auto degenerate = [](Vertex u, Vertex v, Vertex w) {
              const int ax = v.x - u.x, ay = v.y - u.y, az = v.z - u.z;
              const int bx = w.x - u.x, by = w.y - u.y, bz = w.z - u.z;
              return ay * bz - az * by == 0 && az * bx - ax * bz == 0 && ax * by - ay * bx == 0;
            };
            int d = dist2(at(0), at(2)) <= dist2(at(1), at(3)) ? 0 : 1;
            if (degenerate(at(d), at(d + 1), at(d + 2)) || degenerate(at(d), at(d + 2), at((d + 3) & 3))) d ^= 1;
            std::uint16_t* t = indices + 3 * tri;
            t[0] = q[d];
            t[1] = q[d + 1];
            t[2] = q[d + 2];
            t[3] = q[d];
            t[4] = q[d + 2];
            t[5] = q[(d + 3) & 3];
            materials[tri] = materials[tri + 1] = solid.material;
            tri += 2;
          }
        }
      }
    }
  };
  emit(true);
  out.owned_triangle_count = tri;
  if (apron == kWideApron) emit(false);
  out.triangle_count = tri;
  return tri;
}

}  // namespace vtp::mesher
