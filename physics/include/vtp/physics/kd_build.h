#pragma once
/// \file
/// The loose kD build over one chunk's triangles, after the loose kD tree Roblox published for its voxel terrain
/// physics: each branch splits its triangles in two on one axis and keeps
/// two planes, the left child's maximum and the right child's minimum along that axis, each tight to its child's
/// content (so the children may overlap: "loose"). The split is on the longest axis of the node's content bounds, at
/// the mean of the triangles' midpoints; when one side would get fewer than a quarter of the triangles, at the median
/// instead. A node with at most `leaf_triangles` triangles, or at `max_depth`, is a leaf.
///
/// The collider uses the build only to cluster triangles into leaves (collider_builder.h); the nodes are kept for the
/// profiler's reference row (the published layout). Everything is on the integer grid, so the planes are exact.

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace vtp::physics {

/// Integer bounds of one triangle. [Unit: grid]
struct TriangleBounds {
  std::array<std::int16_t, 3> min{}, max{};
};

struct KdNode {
  std::int32_t left_max = 0;   ///< Planes along `axis`: the left child's content ends here ...
  std::int32_t right_min = 0;  ///< ... and the right child's starts here. [Unit: grid]
  std::int32_t axis = -1;      ///< -1 for a leaf.
  std::int32_t left = -1, right = -1;  ///< Child node indices (branches).
  std::int32_t leaf = -1;              ///< Leaf index (leaves).
};

struct KdLeaf {
  std::int32_t first = 0, count = 0;  ///< A range of KdBuild::order.
  std::array<std::int16_t, 3> min{}, max{};  ///< Bounds of the leaf's triangles. [Unit: grid]
};

struct KdBuildOptions {
  int leaf_triangles = 8;  ///< In [1, 64].
  int max_depth = 32;      ///< In [0, 64]; 0 makes the root a leaf (one leaf: a brute-force scan).
};

struct KdBuild {
  std::vector<std::uint16_t> order;  ///< Triangle ids, grouped by leaf (leaf i is order[first, first + count)).
  std::vector<KdLeaf> leaves;        ///< In depth-first order, left before right.
  std::vector<KdNode> nodes;         ///< nodes[0] is the root (a leaf when there are few triangles).
};

/// The work arrays of buildKd, kept between calls (grown to the largest input). Not thread-safe: one per thread, as
/// the collider builder keeps one.
class KdScratch {
 public:
  KdScratch();
  ~KdScratch();
  KdScratch(const KdScratch&) = delete;
  KdScratch& operator=(const KdScratch&) = delete;

 private:
  struct Arrays;  // kd_build.cpp's work arrays
  friend void buildKd(std::span<const TriangleBounds>, KdBuildOptions, KdBuild&, KdScratch&);
  std::unique_ptr<Arrays> m_arrays;
};

/// Builds over `bounds` (triangle i has bounds[i]; triangles past the 65535th are left out; an empty span gives a
/// root leaf with an empty range and inverted bounds) into `out`, reusing its capacity and `scratch`'s. Deterministic:
/// the same bounds always give the same build; which triangles a leaf holds does not depend on the partition's order,
/// the order inside a leaf does. Options are clamped to their ranges. [Unit: grid]
void buildKd(std::span<const TriangleBounds> bounds, KdBuildOptions options, KdBuild& out, KdScratch& scratch);

/// The same with a scratch of the calling thread's own (thread-safe; in position-independent code each call pays
/// for finding it, so hot loops keep a KdScratch instead).
void buildKd(std::span<const TriangleBounds> bounds, KdBuildOptions options, KdBuild& out);

/// Levels below the root of the deepest leaf (0 when the root is a leaf).
int kdDepth(const KdBuild& build);

}  // namespace vtp::physics
