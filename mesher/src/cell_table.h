#pragma once
// Per-pattern facts about a surface-nets cell, computed at compile time: for each of the 256 inside/outside patterns
// of a cell's 8 corners, which of its 12 edges are active and the parts of the vertex sums that do not depend on the
// weights. Corner k of a cell is voxel (k & 1, (k >> 1) & 1, k >> 2) relative to the cell's lowest voxel.
//
// Crossings are summed in 1/65280 voxel (65280 = 256 x 255, so both crossing rules of surface_mesher.h are exact
// integers there). A crossing on an active edge along axis a whose ends are e_lo, e_hi, measured from the lowest
// corner, is 256 (e_lo + e_hi) - 32640 when the lower corner is inside (the column rule (e_in + e_out - 127.5) / 255)
// and 65280 - that = 97920 - 256 (e_lo + e_hi) when the upper one is; its other two coordinates are the edge's (0 or
// 65280). So each axis sum is `constant` plus or minus 256 times the edges' weight pairs. An edge whose ends are both
// partly filled crosses by the linear rule instead; the kernel adds the difference to the sums of the cells that may
// have one (linearCorrection in surface_mesher.cpp).

#include <array>
#include <cstdint>

#include "vtp/mesher/surface_mesher.h"

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
// `divisor` finish the per-axis means. Both are 32-bit lanes the kernel loads as whole 16-byte vectors.
struct alignas(32) CellPattern {
  std::int8_t sign[32] = {};      // per corner byte of an edge: +1 lower corner inside, -1 upper inside, 0 inactive
  std::int32_t constant[4] = {};  // lanes 0..2: per axis (x, y, z) [Unit: 1/65280 voxel]; lane 3: 0
  float divisor[4] = {};          // 63.75 x the active edge count (1 when none): sum / divisor is the mean in 1/1024
                                  // voxel; lane 3: 1
};
static_assert(sizeof(CellPattern) == 64);

// Units per voxel of the crossing sums.
inline constexpr int kCrossingScale = 256 * 255;

constexpr std::array<CellPattern, 256> makeCellPatterns() {
  std::array<CellPattern, 256> table{};
  for (int pattern = 0; pattern < 256; ++pattern) {
    CellPattern& p = table[std::size_t(pattern)];
    int count = 0;  // active edges (3..12 when any; a cell with a sign change has at least 3)
    for (int e = 0; e < 12; ++e) {
      const CellEdge edge = kCellEdges[e];
      const bool lo_in = (pattern >> edge.lo) & 1, hi_in = (pattern >> edge.hi) & 1;
      if (lo_in == hi_in) continue;
      const int byte = e < 8 ? 2 * e : 16 + 2 * (e - 8);
      p.sign[byte] = p.sign[byte + 1] = std::int8_t(lo_in ? 1 : -1);
      ++count;
      for (int a = 0; a < 3; ++a) {
        if (a == edge.axis) {
          p.constant[a] += lo_in ? -kCrossingScale / 2 : 3 * kCrossingScale / 2;
        } else {
          p.constant[a] += kCrossingScale * ((edge.lo >> a) & 1);
        }
      }
    }
    for (int a = 0; a < 3; ++a) p.divisor[a] = count > 0 ? float(count) * kCrossingScale / kPositionScale : 1.0f;
    p.divisor[3] = 1.0f;
  }
  return table;
}

inline constexpr std::array<CellPattern, 256> kCellPatterns = makeCellPatterns();

}  // namespace vtp::mesher
