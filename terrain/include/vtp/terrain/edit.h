#pragma once
/// \file
/// Edit commands, their caps, and what an edit reports. Semantics: terrain/README.md; this header is the API.
///
/// Coverage: a shape covers voxel v by `cov = clamp(0.5 + s, 0, 1)` where s is how far v's centre lies inside the
/// shape (sphere: r - distance to the centre; cylinder: the smaller of r - radial distance and h/2 - |dy|; box: the
/// smallest distance from the centre to a face, negative outside). A voxel with cov > 0 is edited with
/// `c = round(255 * cov)`. So a box with integer corners covers exactly the voxels whose centre lies inside it, fully.

#include <cstdint>
#include <variant>
#include <vector>

#include "vtp/terrain/coords.h"
#include "vtp/terrain/voxel.h"

namespace vtp::terrain {

/// Per-world caps that every edit is checked against before anything changes.
struct EditLimits {
  double max_radius = 64.0;                      ///< Sphere and cylinder radius cap. [Unit: voxel]
  std::int64_t max_edit_voxels = 1 << 22;        ///< Voxels one edit may touch (its voxel bounding box).
  std::int64_t max_batch_voxels = 1 << 24;       ///< Voxels a batch may touch, summed over its edits.
  /// Chunks one edit's voxel bounding box may overlap. What an edit costs (time, and memory for every chunk it makes
  /// non-uniform) grows with its chunks, not only its voxels: a 1-voxel-thick column 2^22 voxels long stays within
  /// the voxel cap and would overlap 2^19 chunks. A cube within the default voxel cap overlaps at most 21^3 = 9,261.
  std::int64_t max_edit_chunks = 1 << 14;
  std::int64_t max_batch_chunks = 1 << 16;       ///< Distinct chunks a batch's edits may overlap.
};

/// What a shape edit does to the voxels it covers.
enum class EditOp : std::uint8_t {
  kFill,   ///< Add material (water or a solid); terrain/README.md says how it meets existing voxels.
  kClear,  ///< Remove: occupancy = min(old, 255 - c); occupancy 0 becomes air. Material is ignored.
  kPaint,  ///< Change the material of solid voxels (cov > 0) to a solid material; occupancy kept.
};

/// Axis-aligned box, half-open: [min, max). [Unit: voxel]
struct BoxShape {
  Vec3d min, max;
};
/// Ball. [Unit: voxel]
struct SphereShape {
  Vec3d center;
  double radius = 0;  ///< (0, EditLimits::max_radius]
};
/// Upright (Y-axis) cylinder centred on `center`, spanning center.y ± height/2. [Unit: voxel]
struct CylinderShape {
  Vec3d center;
  double radius = 0;  ///< (0, EditLimits::max_radius]
  double height = 0;  ///< > 0; the edit's voxel count cap bounds it.
};
using Shape = std::variant<BoxShape, SphereShape, CylinderShape>;

/// Fill, clear or paint a shape.
struct ShapeEdit {
  Shape shape;
  EditOp op = EditOp::kFill;
  std::uint8_t material = 0;  ///< kFill: water or a defined solid; kPaint: a defined solid; kClear: ignored.
};
/// Swap material `from` for `to` in every voxel of a box whose material is `from` (occupancy kept). Both must be
/// defined solids (or both water, a no-op); air is never replaced, and water and solids are never swapped.
struct ReplaceEdit {
  VoxelBox box;
  std::uint8_t from = 0, to = 0;
};
/// Set one voxel (occupancy 0 yields air; the material must be defined).
struct SetVoxelEdit {
  VoxelCoord at;
  Voxel value;
};
/// Overwrite a box with given voxels, x fastest, then y, then z (the readBox layout). Every voxel is canonicalised
/// (occupancy 0 becomes air) and its material must be defined.
struct WriteRegionEdit {
  VoxelBox box;
  std::vector<Voxel> voxels;  ///< Exactly box.volume() voxels.
};

/// Any edit. A batch is a span of these, applied atomically: all validated first, then all applied.
using EditCommand = std::variant<ShapeEdit, ReplaceEdit, SetVoxelEdit, WriteRegionEdit>;

/// What one edit or batch changed.
struct EditResult {
  VoxelBox changed;                 ///< Bounding box of the voxels whose value changed; empty when none did.
  std::vector<ChunkCoord> chunks;   ///< Chunks whose content changed, in ChunkCoord order.
};

/// One chunk's change, delivered to listeners before the edit call returns.
struct ChangeEvent {
  ChunkCoord chunk;
  std::uint64_t version = 0;  ///< The chunk's version after the edit (World::chunkVersion).
  VoxelBox changed;           ///< Voxels of this chunk whose value changed (non-empty, inside chunkBox(chunk)).
};

}  // namespace vtp::terrain
