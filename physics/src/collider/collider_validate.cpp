// Collider::validate: the packed layout (collider.h) walked section by section, against the invariants the query
// kernels count on. Built in every build type; O(triangles + vertices + leaves), for tests after random edits.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "vtp/physics/collider.h"

namespace vtp::physics {

namespace {

[[gnu::cold]] Status broken(const std::string& what) {
  return Error{ErrorCode::kCorrupt, "Collider::validate: " + what, {}};
}

std::string boxText(const GridBox& b) {
  return "(" + std::to_string(b.min[0]) + "," + std::to_string(b.min[1]) + "," + std::to_string(b.min[2]) + ")..(" +
         std::to_string(b.max[0]) + "," + std::to_string(b.max[1]) + "," + std::to_string(b.max[2]) + ")";
}

}  // namespace

Status Collider::validate() const {
  const int triangles = m_triangles, vertices = m_vertices, leaves = m_leaves, groups = groupCount();
  // The sections where the counts put them (collider_builder.cpp), filling the allocation exactly.
  const std::uint32_t want_sections[3] = {
      std::uint32_t(6 * kLeafGroup * groups), std::uint32_t(6 * kLeafGroup * groups + leaves + 1),
      std::uint32_t(6 * kLeafGroup * groups + leaves + 1 + 3 * vertices)};
  for (int k = 0; k < 3; ++k) {
    if (m_sections[std::size_t(k)] != want_sections[k]) {
      return broken("section " + std::to_string(k) + " starts at entry " + std::to_string(m_sections[std::size_t(k)]) +
                    ", the counts put it at " + std::to_string(want_sections[k]));
    }
  }
  const std::size_t want_bytes =
      2 * (std::size_t(m_sections[2]) + 3 * std::size_t(triangles) + kCornerPadding) + std::size_t(triangles);
  if (m_allocation_bytes != want_bytes) {
    return broken("the allocation holds " + std::to_string(m_allocation_bytes) + " bytes, the sections " +
                  std::to_string(want_bytes));
  }
  if (m_data == nullptr) return broken("no allocation");
  if (reinterpret_cast<std::uintptr_t>(m_data.get()) % 16 != 0) return broken("the leaf boxes are not 16-byte aligned");
  if (triangles > 0 && leaves == 0) return broken(std::to_string(triangles) + " triangles and no leaf");

  // Every triangle in exactly one leaf's range [leafTriangles(l)[0], leafTriangles(l)[1]).
  std::vector<std::uint8_t> in_leaves(std::size_t(triangles), 0);
  const std::uint16_t* start = leafStart();
  for (int l = 0; l < leaves; ++l) {
    const int first = start[l], last = start[l + 1];
    if (first > last || last > triangles) {
      return broken("leaf " + std::to_string(l) + "'s range " + std::to_string(first) + ".." + std::to_string(last) +
                    " is not within 0.." + std::to_string(triangles));
    }
    if (first == last && triangles > 0) return broken("leaf " + std::to_string(l) + " holds no triangle");
    for (int t = first; t < last; ++t) {
      if (in_leaves[std::size_t(t)]++ != 0) {
        return broken("triangle " + std::to_string(t) + " lies in leaf " + std::to_string(l) + " and an earlier one");
      }
    }
  }
  for (int t = 0; t < triangles; ++t) {
    if (in_leaves[std::size_t(t)] == 0) return broken("triangle " + std::to_string(t) + " lies in no leaf");
  }

  // Corner offsets: 3 x a stored vertex's index (bit 15 the edge flag), every vertex used; the padding zero.
  std::vector<std::uint8_t> used(std::size_t(vertices), 0);
  for (int k = 0; k < 3; ++k) {
    for (int t = 0; t < triangles; ++t) {
      const unsigned offset = corner(k)[t] & 0x7FFFu;
      if (offset % 3 != 0 || offset / 3 >= unsigned(vertices)) {
        return broken("corner " + std::to_string(k) + " of triangle " + std::to_string(t) + " has offset " +
                      std::to_string(offset) + ", not 3 x a vertex below " + std::to_string(vertices));
      }
      used[offset / 3] = 1;
      if (!m_has_edge_flags && (corner(k)[t] >> 15) != 0) {
        return broken("triangle " + std::to_string(t) + " has an edge flag, but the collider was built without them");
      }
    }
  }
  for (int v = 0; v < vertices; ++v) {
    if (used[std::size_t(v)] == 0) return broken("vertex " + std::to_string(v) + " is used by no triangle");
  }
  for (int i = 0; i < kCornerPadding; ++i) {
    if (corner(3)[i] != 0) return broken("corner padding entry " + std::to_string(i) + " is not zero");
  }
  const std::int16_t* p = positions();
  for (int i = 0; i < 3 * vertices; ++i) {
    if (p[i] < mesher::kMinPosition || p[i] > mesher::kMaxPosition) {
      return broken("vertex " + std::to_string(i / 3) + " lies outside the mesher's range");
    }
  }

  // Each leaf's box holds its triangles' bounds; the union of all is bounds().
  GridBox all{{std::numeric_limits<std::int16_t>::max(), std::numeric_limits<std::int16_t>::max(),
               std::numeric_limits<std::int16_t>::max()},
              {std::numeric_limits<std::int16_t>::min(), std::numeric_limits<std::int16_t>::min(),
               std::numeric_limits<std::int16_t>::min()}};
  for (int l = 0; l < leaves; ++l) {
    const GridBox box = leafBounds(l);
    for (int t = start[l]; t < start[l + 1]; ++t) {
      const ColliderTriangle tri = triangle(t);
      for (const mesher::Vertex& v : tri.vertices) {
        const std::int32_t c[3] = {v.x, v.y, v.z};
        for (std::size_t a = 0; a < 3; ++a) {
          if (c[a] < box.min[a] || c[a] > box.max[a]) {
            return broken("leaf " + std::to_string(l) + "'s box " + boxText(box) + " does not hold triangle " +
                          std::to_string(t) + "'s vertex (" + std::to_string(v.x) + "," + std::to_string(v.y) + "," +
                          std::to_string(v.z) + ")");
          }
          all.min[a] = std::min(all.min[a], c[a]);
          all.max[a] = std::max(all.max[a], c[a]);
        }
      }
    }
  }
  // The last group's lanes past the last leaf: boxes nothing overlaps (min > max on every axis).
  for (int l = leaves; l < groups * kLeafGroup; ++l) {
    const GridBox box = leafBounds(l);
    for (std::size_t a = 0; a < 3; ++a) {
      if (box.min[a] <= box.max[a]) {
        return broken("unused leaf lane " + std::to_string(l) + " holds the box " + boxText(box) + ", not an empty one");
      }
    }
  }
  const GridBox b = bounds();
  if (triangles > 0 && (b.min != all.min || b.max != all.max)) {
    return broken("bounds() is " + boxText(b) + ", the triangles' " + boxText(all));
  }
  if (triangles == 0 && !(b.min[0] > b.max[0] && b.min[1] > b.max[1] && b.min[2] > b.max[2])) {
    return broken("an empty collider's bounds() " + boxText(b) + " are not empty");
  }
  for (int a = 0; a < 3; ++a) {
    const bool flat = b.min[std::size_t(a)] == b.max[std::size_t(a)];
    if (bool(m_flat_axes >> a & 1) != flat) {
      return broken("the flat-axis bit of axis " + std::to_string(a) + " disagrees with bounds()");
    }
  }
  if ((m_flat_axes >> 3) != 0) return broken("flat-axis bits above axis 2 are set");
  return {};
}

}  // namespace vtp::physics
