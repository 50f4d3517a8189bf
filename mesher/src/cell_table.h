#pragma once
// Per-pattern facts about a surface-nets cell, computed at compile time: for each of the 256 inside/outside patterns
// of a cell's 8 corners, which of its 12 edges are active and the parts of the vertex sums that do not depend on the
// weights. Corner k of a cell is voxel (k & 1, (k >> 1) & 1, k >> 2) relative to the cell's lowest voxel.
//
// A crossing on an active edge along axis a, in 1/256 voxel from the lowest corner, is (e_lo + e_hi - 127) when the
// lower corner is inside and 256 - (e_lo + e_hi - 127) = 383 - (e_lo + e_hi) when the upper one is; its other two
// coordinates are the edge's (0 or 256). So each axis sum is `constant` plus or minus the edges' weight pairs.

#include <array>
#include <cstdint>

namespace vtp::mesher {

struct CellEdge {
  std::uint8_t lo, hi, axis;  // corner indices (lo has the smaller coordinate along `axis`)
};

// x-edges, then y-edges, then z-edges.
inline constexpr CellEdge kCellEdges[12] = {
    {0, 1, 0}, {2, 3, 0}, {4, 5, 0}, {6, 7, 0}, {0, 2, 1}, {1, 3, 1},
    {4, 6, 1}, {5, 7, 1}, {0, 4, 2}, {1, 5, 2}, {2, 6, 2}, {3, 7, 2},
};

// Laid out for the vertex kernel: `sign` multiplies the corner weights of the 12 edges, arranged as the kernel's
// shuffle lays them out (edges 0..7 as byte pairs in the low 16 bytes, edges 8..11 in the next 8); `constant` and
// the reciprocal of the edge count finish the per-axis means.
struct alignas(32) CellPattern {
  std::int8_t sign[32] = {};      // per corner byte of an edge: +1 lower corner inside, -1 upper inside, 0 inactive
  std::int32_t constant[4] = {};  // per axis (x, y, z, unused) [Unit: 1/256 voxel]
  std::uint16_t reciprocal = 0;   // ceil(2^16 / count): (sum * reciprocal) >> 16 == floor(sum / count), sum <= 3072
  std::uint16_t active = 0;       // bit e: edge e has one inside end
  std::uint8_t count = 0;         // active edges (3..12 when any; a cell with a sign change has at least 3)
};

constexpr std::array<CellPattern, 256> makeCellPatterns() {
  std::array<CellPattern, 256> table{};
  for (int pattern = 0; pattern < 256; ++pattern) {
    CellPattern& p = table[std::size_t(pattern)];
    for (int e = 0; e < 12; ++e) {
      const CellEdge edge = kCellEdges[e];
      const bool lo_in = (pattern >> edge.lo) & 1, hi_in = (pattern >> edge.hi) & 1;
      if (lo_in == hi_in) continue;
      p.active = std::uint16_t(p.active | (1 << e));
      const int byte = e < 8 ? 2 * e : 16 + 2 * (e - 8);
      p.sign[byte] = p.sign[byte + 1] = std::int8_t(lo_in ? 1 : -1);
      ++p.count;
      for (int a = 0; a < 3; ++a) {
        if (a == edge.axis) {
          p.constant[a] += lo_in ? -127 : 383;
        } else {
          p.constant[a] += 256 * ((edge.lo >> a) & 1);
        }
      }
    }
    if (p.count > 0) p.reciprocal = std::uint16_t((65536u + p.count - 1) / p.count);
  }
  return table;
}

inline constexpr std::array<CellPattern, 256> kCellPatterns = makeCellPatterns();

}  // namespace vtp::mesher
