// The reference mesher: surface nets (S. Gibson, "Constrained Elastic Surface Nets", MERL TR99-24, 1998) exactly as
// the rules in vtp/mesher/surface_mesher.h state them, one voxel, one edge and one cell at a time, with no caching, no
// bit tricks and no chunk boundaries. Speed does not matter here; being obviously right does.
#include "mesher/reference_mesher.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

namespace vtp::test {

using terrain::Voxel;
using terrain::VoxelBox;
using terrain::VoxelCoord;

namespace {

// --- The rules, written out from the header ---------------------------------------------------------------------

// Inside: a solid material (id >= 2) with occupancy >= 128. Water and air are outside.
bool isInside(Voxel v) { return v.material >= 2 && v.occupancy >= 128; }

// Weight: the occupancy of a solid voxel, 0 for anything else.
int weightOf(Voxel v) { return v.material >= 2 ? int(v.occupancy) : 0; }

VoxelCoord offset(VoxelCoord p, std::array<int, 3> d) { return {p.x + d[0], p.y + d[1], p.z + d[2]}; }

std::int32_t axisOf(VoxelCoord p, int axis) { return axis == 0 ? p.x : axis == 1 ? p.y : p.z; }

// Unit step along one axis.
std::array<int, 3> unit(int axis) {
  std::array<int, 3> d{0, 0, 0};
  d[std::size_t(axis)] = 1;
  return d;
}

// The vertex of cell c: the mean of the crossings on its active edges, per axis relative to the centre of voxel c, in
// 1/1024 voxel rounded down, clamped to 1..1023; then moved to world fixed point. The crossings are summed exactly in
// 1/65280 voxel (= 1/(256 x 255), where both crossing rules give integers).
FixedPoint cellVertex(const VoxelGrid& grid, VoxelCoord c) {
  constexpr std::int64_t kUnits = 256 * 255;  // crossing units per voxel
  std::array<std::int64_t, 3> sum{0, 0, 0};
  int active = 0;
  // The cell's 12 edges: for each axis a, the 4 edges along a at offsets (0 or 1) on the other two axes.
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3, d = (a + 2) % 3;
    for (int ob = 0; ob < 2; ++ob) {
      for (int od = 0; od < 2; ++od) {
        std::array<int, 3> o{0, 0, 0};
        o[std::size_t(b)] = ob;
        o[std::size_t(d)] = od;
        const VoxelCoord lo = offset(c, o);
        const VoxelCoord hi = offset(lo, unit(a));
        const Voxel vlo = grid.at(lo), vhi = grid.at(hi);
        if (isInside(vlo) == isInside(vhi)) continue;
        // t from the inside end towards the outside end: (e_in + e_out - 127.5) / 255 voxel when an end is saturated,
        // else the linear interpolation of the weights to 127.5 in 1/256 voxel, rounded half up, clamped to 1..255.
        const int e_in = isInside(vlo) ? weightOf(vlo) : weightOf(vhi);
        const int e_out = isInside(vlo) ? weightOf(vhi) : weightOf(vlo);
        std::int64_t t = 128 * (2 * (e_in + e_out) - 255);  // (e_in + e_out - 127.5) / 255 voxel, in units
        if (e_in < 255 && e_out > 0) {
          const double exact = 256.0 * (e_in - 127.5) / (e_in - e_out);
          t = 255 * std::clamp(int(std::floor(exact + 0.5)), 1, 255);
        }
        std::array<std::int64_t, 3> crossing{0, 0, 0};
        crossing[std::size_t(a)] = isInside(vlo) ? t : kUnits - t;
        crossing[std::size_t(b)] = kUnits * ob;
        crossing[std::size_t(d)] = kUnits * od;
        for (int i = 0; i < 3; ++i) sum[std::size_t(i)] += crossing[std::size_t(i)];
        ++active;
      }
    }
  }
  if (active == 0) throw std::logic_error("reference mesher: a cell around an active edge has no active edge");
  FixedPoint out{};
  for (int i = 0; i < 3; ++i) {
    // Every crossing coordinate is >= 0, so integer division rounds down.
    const std::int64_t mean = std::clamp<std::int64_t>(sum[std::size_t(i)] * kScale / (kUnits * active), 1, kScale - 1);
    out[std::size_t(i)] = std::int32_t(kScale * std::int64_t(axisOf(c, i)) + kScale / 2 + mean);
  }
  return out;
}

bool zeroArea(const FixedPoint& a, const FixedPoint& b, const FixedPoint& c) {
  const auto cr = crossProduct(MeshTriangle{{a, b, c}, 0});
  return cr[0] == 0 && cr[1] == 0 && cr[2] == 0;
}

std::int64_t squaredDistance(const FixedPoint& a, const FixedPoint& b) {
  std::int64_t s = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const std::int64_t d = std::int64_t(a[i]) - b[i];
    s += d * d;
  }
  return s;
}

// The quad of the edge from p along axis a, split into two triangles and appended (the edge must be active).
void emitQuad(const VoxelGrid& grid, VoxelCoord p, int a, std::vector<MeshTriangle>& out,
              std::vector<VoxelCoord>* inside_voxels) {
  const VoxelCoord upper = offset(p, unit(a));
  const bool lower_inside = isInside(grid.at(p));
  const VoxelCoord inside_voxel = lower_inside ? p : upper;
  const std::uint8_t material = grid.at(inside_voxel).material;

  // Cells around the edge, as (b, c) offsets from p: (-1,-1), (0,-1), (0,0), (-1,0): counter-clockwise seen from +a.
  const int b = (a + 1) % 3, c = (a + 2) % 3;
  constexpr int kCellOffsets[4][2] = {{-1, -1}, {0, -1}, {0, 0}, {-1, 0}};
  std::array<FixedPoint, 4> q{};
  for (std::size_t i = 0; i < 4; ++i) {
    std::array<int, 3> o{0, 0, 0};
    o[std::size_t(b)] = kCellOffsets[i][0];
    o[std::size_t(c)] = kCellOffsets[i][1];
    q[i] = cellVertex(grid, offset(p, o));
  }
  // Normal from the inside end to the outside end: as is when the lower end is inside, else the cyclic order
  // reversed keeping the first cell first, (v0, v3, v2, v1). The header says only "reversed"; which cell then comes
  // first decides the diagonal on a tie (|v0-v2| == |v1-v3|), and the fast mesher keeps v0 first.
  if (!lower_inside) q = {q[0], q[3], q[2], q[1]};
  for (const auto& tri : splitQuad(q)) {
    out.push_back(MeshTriangle{tri, material});
    if (inside_voxels != nullptr) inside_voxels->push_back(inside_voxel);
  }
}

std::int64_t floorDiv(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

std::array<std::array<FixedPoint, 3>, 2> splitQuad(const std::array<FixedPoint, 4>& q) {
  // Shorter diagonal (ties: v0-v2); if that split has a zero-area triangle, the other one.
  using Split = std::array<std::array<std::size_t, 3>, 2>;
  constexpr Split kSplit02{{{0, 1, 2}, {0, 2, 3}}};
  constexpr Split kSplit13{{{1, 2, 3}, {1, 3, 0}}};
  auto degenerate = [&](const Split& s) {
    return zeroArea(q[s[0][0]], q[s[0][1]], q[s[0][2]]) || zeroArea(q[s[1][0]], q[s[1][1]], q[s[1][2]]);
  };
  const bool prefer02 = squaredDistance(q[0], q[2]) <= squaredDistance(q[1], q[3]);
  const Split& first = prefer02 ? kSplit02 : kSplit13;
  const Split& second = prefer02 ? kSplit13 : kSplit02;
  const Split& chosen = degenerate(first) ? second : first;
  return {{{q[chosen[0][0]], q[chosen[0][1]], q[chosen[0][2]]}, {q[chosen[1][0]], q[chosen[1][1]], q[chosen[1][2]]}}};
}

// --- Grid -------------------------------------------------------------------------------------------------------

Voxel VoxelGrid::at(VoxelCoord v) const {
  if (!box.contains(v)) throw std::out_of_range("reference mesher: voxel outside the grid");
  const std::int64_t sx = box.max.x - box.min.x, sy = box.max.y - box.min.y;
  return voxels[std::size_t((v.x - box.min.x) + sx * ((v.y - box.min.y) + sy * std::int64_t(v.z - box.min.z)))];
}

Voxel VoxelGrid::atOrAir(VoxelCoord v) const { return box.contains(v) ? at(v) : terrain::kAir; }

VoxelGrid makeGrid(const VoxelBox& box, Voxel fill) {
  return VoxelGrid{box, std::vector<Voxel>(std::size_t(box.volume()), fill)};
}

// --- Meshing ----------------------------------------------------------------------------------------------------

std::vector<MeshTriangle> referenceMesh(const VoxelGrid& grid, const VoxelBox& bounds,
                                        const std::function<bool(VoxelCoord)>& owns,
                                        std::vector<VoxelCoord>* inside_voxels) {
  std::vector<MeshTriangle> out;
  if (inside_voxels != nullptr) inside_voxels->clear();
  // Lower voxels in z, y, x order, then the axis, as the header orders the fast mesher's quads.
  for (std::int32_t z = bounds.min.z; z < bounds.max.z; ++z) {
    for (std::int32_t y = bounds.min.y; y < bounds.max.y; ++y) {
      for (std::int32_t x = bounds.min.x; x < bounds.max.x; ++x) {
        const VoxelCoord p{x, y, z};
        if (!owns(p)) continue;
        if (!grid.box.contains({x - 1, y - 1, z - 1}) || !grid.box.contains({x + 1, y + 1, z + 1})) {
          throw std::invalid_argument("reference mesher: an owned voxel's neighbourhood is outside the grid");
        }
        for (int a = 0; a < 3; ++a) {
          if (isInside(grid.at(p)) != isInside(grid.at(offset(p, unit(a))))) emitQuad(grid, p, a, out, inside_voxels);
        }
      }
    }
  }
  return out;
}

std::vector<MeshTriangle> referenceMesh(const VoxelGrid& grid, const VoxelBox& owned,
                                        std::vector<VoxelCoord>* inside_voxels) {
  return referenceMesh(
      grid, owned, [](VoxelCoord) { return true; }, inside_voxels);
}

std::vector<MeshTriangle> referenceMeshRing(const VoxelGrid& grid, const VoxelBox& outer, const VoxelBox& inner) {
  return referenceMesh(grid, outer, [&](VoxelCoord p) { return !inner.contains(p); });
}

// --- Comparing ----------------------------------------------------------------------------------------------------

MeshTriangle canonical(const MeshTriangle& t) {
  std::size_t first = 0;
  for (std::size_t i = 1; i < 3; ++i) {
    if (t.v[i] < t.v[first]) first = i;
  }
  return MeshTriangle{{t.v[first], t.v[(first + 1) % 3], t.v[(first + 2) % 3]}, t.material};
}

std::vector<MeshTriangle> canonicalSorted(std::vector<MeshTriangle> triangles) {
  for (auto& t : triangles) t = canonical(t);
  std::sort(triangles.begin(), triangles.end());
  return triangles;
}

std::size_t duplicateCount(const std::vector<MeshTriangle>& triangles) {
  // Duplicates by position and winding, whatever their material.
  std::vector<std::array<FixedPoint, 3>> positions;
  positions.reserve(triangles.size());
  for (const auto& t : triangles) positions.push_back(canonical(t).v);
  std::sort(positions.begin(), positions.end());
  return std::size_t(positions.end() - std::unique(positions.begin(), positions.end()));
}

std::vector<MeshTriangle> worldTriangles(const mesher::ChunkMesh& mesh, terrain::ChunkCoord chunk, int first,
                                         int last) {
  const FixedPoint origin{chunk.x * terrain::kChunkSize * kScale, chunk.y * terrain::kChunkSize * kScale,
                          chunk.z * terrain::kChunkSize * kScale};
  std::vector<MeshTriangle> out;
  for (int i = first; i < last; ++i) {
    MeshTriangle t;
    for (std::size_t k = 0; k < 3; ++k) {
      const mesher::Vertex& v = mesh.vertices.at(mesh.indices.at(std::size_t(3 * i) + k));
      t.v[k] = {origin[0] + v.x, origin[1] + v.y, origin[2] + v.z};
    }
    t.material = mesh.materials.at(std::size_t(i));
    out.push_back(t);
  }
  return out;
}

VoxelBox apronBox(terrain::ChunkCoord chunk, int apron) {
  const VoxelCoord o = terrain::chunkOrigin(chunk);
  const int side = terrain::kChunkSize + apron;
  return {{o.x - apron, o.y - apron, o.z - apron}, {o.x + side, o.y + side, o.z + side}};
}

VoxelGrid subGrid(const VoxelGrid& grid, const VoxelBox& box) {
  VoxelGrid out{box, {}};
  out.voxels.reserve(std::size_t(box.volume()));
  for (std::int32_t z = box.min.z; z < box.max.z; ++z) {
    for (std::int32_t y = box.min.y; y < box.max.y; ++y) {
      for (std::int32_t x = box.min.x; x < box.max.x; ++x) out.voxels.push_back(grid.at({x, y, z}));
    }
  }
  return out;
}

VoxelGrid readGrid(const terrain::World& world, const VoxelBox& box) {
  VoxelGrid out = makeGrid(box);
  if (const Status s = world.readBox(box, out.voxels); !s.ok())
    throw std::runtime_error("readBox: " + s.error().message);
  return out;
}

FastChunk fastMeshChunk(mesher::SurfaceMesher& mesher, mesher::ChunkMesh& out, const VoxelGrid& grid,
                        terrain::ChunkCoord chunk, int apron) {
  const VoxelGrid box = subGrid(grid, apronBox(chunk, apron));
  const Result<int> r = mesher.mesh(box.voxels, apron, out);
  if (!r.ok()) throw std::runtime_error("SurfaceMesher::mesh: " + r.error().message);
  if (*r != out.triangle_count)
    throw std::runtime_error("SurfaceMesher::mesh returned a count that is not triangle_count");
  return {worldTriangles(out, chunk, 0, out.owned_triangle_count),
          worldTriangles(out, chunk, out.owned_triangle_count, out.triangle_count)};
}

std::string describe(const MeshTriangle& t) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "(%d,%d,%d) (%d,%d,%d) (%d,%d,%d) material %d", t.v[0][0], t.v[0][1], t.v[0][2],
                t.v[1][0], t.v[1][1], t.v[1][2], t.v[2][0], t.v[2][1], t.v[2][2], int(t.material));
  return buf;
}

// --- Properties -----------------------------------------------------------------------------------------------------

std::array<std::int64_t, 3> crossProduct(const MeshTriangle& t) {
  std::array<std::int64_t, 3> e1{}, e2{};
  for (std::size_t i = 0; i < 3; ++i) {
    e1[i] = std::int64_t(t.v[1][i]) - t.v[0][i];
    e2[i] = std::int64_t(t.v[2][i]) - t.v[0][i];
  }
  return {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
}

double areaVoxels(const MeshTriangle& t) {
  const auto c = crossProduct(t);
  const double len = std::sqrt(double(c[0]) * double(c[0]) + double(c[1]) * double(c[1]) + double(c[2]) * double(c[2]));
  return 0.5 * len / (double(kScale) * kScale);
}

EdgeCensus edgeCensus(const std::vector<MeshTriangle>& triangles,
                      const std::function<bool(const FixedPoint&)>& interior) {
  // (lower end, upper end, +1 when directed lower -> upper else -1), sorted so each undirected edge is one run.
  std::vector<std::tuple<FixedPoint, FixedPoint, int>> edges;
  edges.reserve(3 * triangles.size());
  for (const auto& t : triangles) {
    for (std::size_t k = 0; k < 3; ++k) {
      const FixedPoint& a = t.v[k];
      const FixedPoint& b = t.v[(k + 1) % 3];
      if (interior && !interior(a) && !interior(b)) continue;
      if (a < b) {
        edges.emplace_back(a, b, 1);
      } else {
        edges.emplace_back(b, a, -1);
      }
    }
  }
  std::sort(edges.begin(), edges.end());
  EdgeCensus census;
  for (std::size_t i = 0; i < edges.size();) {
    std::size_t j = i;
    int forward = 0, backward = 0;
    while (j < edges.size() && std::get<0>(edges[j]) == std::get<0>(edges[i]) &&
           std::get<1>(edges[j]) == std::get<1>(edges[i])) {
      (std::get<2>(edges[j]) > 0 ? forward : backward) += 1;
      ++j;
    }
    ++census.checked_edges;
    if (forward != backward) ++census.unmatched;
    if (forward + backward > 2) ++census.non_manifold;
    if (forward + backward == 1) ++census.boundary;
    i = j;
  }
  return census;
}

namespace {

using CellKey = std::tuple<std::int32_t, std::int32_t, std::int32_t>;

// The cell a vertex lies in: vertex = 1024 c + 512 + m with m in 1..1023.
CellKey cellOf(const FixedPoint& p) {
  return {std::int32_t(floorDiv(p[0] - kScale / 2, kScale)), std::int32_t(floorDiv(p[1] - kScale / 2, kScale)),
          std::int32_t(floorDiv(p[2] - kScale / 2, kScale))};
}

}  // namespace

std::size_t tJunctionCount(const std::vector<MeshTriangle>& triangles) {
  std::map<CellKey, std::vector<FixedPoint>> by_cell;
  std::vector<std::pair<FixedPoint, FixedPoint>> edges;
  for (const auto& t : triangles) {
    for (std::size_t k = 0; k < 3; ++k) {
      auto& list = by_cell[cellOf(t.v[k])];
      if (std::find(list.begin(), list.end(), t.v[k]) == list.end()) list.push_back(t.v[k]);
      edges.emplace_back(std::min(t.v[k], t.v[(k + 1) % 3]), std::max(t.v[k], t.v[(k + 1) % 3]));
    }
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  std::size_t count = 0;
  for (const auto& [a, b] : edges) {
    const CellKey ca = cellOf(a), cb = cellOf(b);
    bool found = false;
    for (std::int32_t z = std::min(std::get<2>(ca), std::get<2>(cb)); z <= std::max(std::get<2>(ca), std::get<2>(cb));
         ++z) {
      for (std::int32_t y = std::min(std::get<1>(ca), std::get<1>(cb)); y <= std::max(std::get<1>(ca), std::get<1>(cb));
           ++y) {
        for (std::int32_t x = std::min(std::get<0>(ca), std::get<0>(cb));
             x <= std::max(std::get<0>(ca), std::get<0>(cb)); ++x) {
          const auto it = by_cell.find({x, y, z});
          if (it == by_cell.end()) continue;
          for (const FixedPoint& w : it->second) {
            if (w == a || w == b) continue;
            // w strictly between a and b: collinear and 0 < (w-a).(b-a) < |b-a|^2.
            const auto c = crossProduct(MeshTriangle{{a, b, w}, 0});
            if (c[0] != 0 || c[1] != 0 || c[2] != 0) continue;
            std::int64_t dot = 0, len2 = 0;
            for (std::size_t i = 0; i < 3; ++i) {
              dot += (std::int64_t(w[i]) - a[i]) * (std::int64_t(b[i]) - a[i]);
              len2 += (std::int64_t(b[i]) - a[i]) * (std::int64_t(b[i]) - a[i]);
            }
            if (dot > 0 && dot < len2) found = true;
          }
        }
      }
    }
    if (found) ++count;
  }
  return count;
}

std::size_t inconsistentCellCount(const std::vector<MeshTriangle>& triangles) {
  std::map<CellKey, FixedPoint> first_seen;
  std::map<CellKey, bool> bad;
  for (const auto& t : triangles) {
    for (const FixedPoint& p : t.v) {
      const auto [it, inserted] = first_seen.emplace(cellOf(p), p);
      if (!inserted && it->second != p) bad[it->first] = true;
    }
  }
  return bad.size();
}

std::int64_t signedVolume6(const std::vector<MeshTriangle>& triangles) {
  if (triangles.empty()) return 0;
  const FixedPoint o = triangles.front().v[0];
  std::int64_t sum = 0;
  for (const auto& t : triangles) {
    std::array<std::array<std::int64_t, 3>, 3> r{};
    for (std::size_t k = 0; k < 3; ++k) {
      for (std::size_t i = 0; i < 3; ++i) r[k][i] = std::int64_t(t.v[k][i]) - o[i];
    }
    // det(r0, r1, r2) = r0 . (r1 x r2)
    sum += r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0]) +
           r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
  }
  return sum;
}

bool withinSolidNeighbourhood(const MeshTriangle& t, const VoxelGrid& grid) {
  // Per axis, the voxels v with 1024 (v-1) <= p <= 1024 (v+2) for all three vertices p.
  std::array<std::int64_t, 3> lo{}, hi{};
  for (std::size_t i = 0; i < 3; ++i) {
    lo[i] = INT64_MIN;
    hi[i] = INT64_MAX;
    for (const FixedPoint& p : t.v) {
      lo[i] = std::max(lo[i], -floorDiv(-std::int64_t(p[i]), kScale) - 2);  // ceil(p/1024) - 2
      hi[i] = std::min(hi[i], floorDiv(p[i], kScale) + 1);
    }
  }
  for (std::int64_t z = lo[2]; z <= hi[2]; ++z) {
    for (std::int64_t y = lo[1]; y <= hi[1]; ++y) {
      for (std::int64_t x = lo[0]; x <= hi[0]; ++x) {
        if (isInside(grid.atOrAir({std::int32_t(x), std::int32_t(y), std::int32_t(z)}))) return true;
      }
    }
  }
  return false;
}

std::vector<double> verticalHits(const std::vector<MeshTriangle>& triangles, std::int32_t x, std::int32_t z) {
  // Orientation of (a, b, p) projected on the xz plane, exact.
  auto orient = [](const FixedPoint& a, const FixedPoint& b, std::int64_t px, std::int64_t pz) {
    return (std::int64_t(b[0]) - a[0]) * (pz - a[2]) - (std::int64_t(b[2]) - a[2]) * (px - a[0]);
  };
  std::vector<double> hits;
  for (const auto& t : triangles) {
    const std::int64_t total = orient(t.v[0], t.v[1], t.v[2][0], t.v[2][2]);
    if (total == 0) continue;  // vertical triangle: the line grazes it at most along an edge another triangle has
    const std::int64_t w0 = orient(t.v[1], t.v[2], x, z);
    const std::int64_t w1 = orient(t.v[2], t.v[0], x, z);
    const std::int64_t w2 = orient(t.v[0], t.v[1], x, z);
    const bool inside = total > 0 ? (w0 >= 0 && w1 >= 0 && w2 >= 0) : (w0 <= 0 && w1 <= 0 && w2 <= 0);
    if (!inside) continue;
    hits.push_back((double(w0) * t.v[0][1] + double(w1) * t.v[1][1] + double(w2) * t.v[2][1]) / double(total));
  }
  return hits;
}

}  // namespace vtp::test
