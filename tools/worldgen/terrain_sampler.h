#pragma once
/// \file
/// Turns a TerrainLayout into voxels. The terrain is a density field d (in voxels, positive inside rock, roughly the
/// signed distance to the surface) built from smooth pieces: rolling hills as a height field, lakes and rivers carved
/// into it, mesas, islands, the rim and bedrock added, caves and tunnels cut out. A voxel's occupancy is
/// round(255 * clamp(0.5 + d, 0, 1)) at its centre, the same rule as edit coverage (edit.h), so the
/// surface passes where d = 0 and voxels near it hold fractions: a smooth mesher makes slopes, not stairs.
/// Materials follow from a walk down each column (grass, dirt, sand near water, rock, ore veins).

#include <cstdint>
#include <span>
#include <vector>

#include "noise.h"
#include "terrain_layout.h"
#include "vtp/terrain/voxel.h"

namespace vtp::worldgen {

/// A rectangle of voxel columns: x in [x0, x1), z in [z0, z1). [Unit: voxel]
struct ColumnRect {
  std::int32_t x0 = 0, z0 = 0;  ///< First column (inclusive).
  std::int32_t x1 = 0, z1 = 0;  ///< End (exclusive).
};

/// Samples one layout. Immutable after construction: any number of threads may call its const functions.
class TerrainSampler {
 public:
  /// Takes the layout (planTerrain's output; its box at least kMinTerrainSize).
  explicit TerrainSampler(TerrainLayout layout);

  /// The layout being sampled.
  const TerrainLayout& layout() const noexcept { return m_layout; }

  /// Height of the open ground at (x, z): the hills as carved by lakes and rivers, without mesas, islands, caves or
  /// the rim. Water covers it where it is below layout().water_level. [Unit: voxel]
  double surfaceHeight(double x, double z) const;

  /// Horizontal distance from (x, z) to the edge of the nearest water body's channel (its path widened by its
  /// radius); negative inside a channel, 1e300 when the layout has no water. [Unit: voxel]
  double waterDistance(double x, double z) const;

  /// Writes the voxels of the columns of `rect` over the whole height of layout().box into `out` in World::readBox
  /// order (x fastest, then y, then z). Preconditions: rect is non-empty and inside the box; out.size() equals
  /// (x1 - x0) * box height * (z1 - z0). Every voxel written is canonical. Output depends only on the layout and
  /// the voxel, never on how the world is cut into rects.
  void fillColumns(ColumnRect rect, std::span<terrain::Voxel> out) const;

 private:
  struct Candidates;
  struct ColumnInfo;
  struct ColumnScratch;
  double hillsAt(double x, double z) const;
  double waterReach(const WaterBody& body) const;
  double pathDistance2(std::size_t body_index, double x, double z, const std::vector<std::size_t>* segments) const;
  double carvedHeight(double x, double z, double hills, const Candidates* candidates) const;
  Candidates gather(ColumnRect rect) const;
  void fillColumn(std::int32_t x, std::int32_t z, const ColumnInfo& info, const Candidates& candidates,
                  ColumnScratch& scratch, std::span<terrain::Voxel> column, std::size_t stride) const;

  TerrainLayout m_layout;
  FractalNoise m_hills;       // rolling hills, 2D
  FractalNoise m_shore;       // wobble of lake and river outlines, 2D
  FractalNoise m_outline;     // wobble of mesa and island outlines, 2D
  FractalNoise m_rim;         // wobble of the rim's face and top, 2D
  FractalNoise m_caves;       // cave chambers, 3D
  FractalNoise m_vein_mask;   // where veins occur, 3D
  std::uint64_t m_vein_seed;  // the vein sheets: single-octave 3D gradient noise
  FractalNoise m_vein_kind;   // jitters the depth bands of ore kinds, 2D
};

}  // namespace vtp::worldgen
