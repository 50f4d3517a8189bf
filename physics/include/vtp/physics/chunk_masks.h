#pragma once
/// \file
/// The broadphase's per-chunk data: which voxels of a chunk could hold collision geometry, as dilated bit masks, so
/// "could this body touch anything here?" is answered with ANDs and no mesh (the "bit broadphase" Roblox published
/// for its voxel terrain physics; physics/README.md, "What the module does").
///
/// Why it is conservative: the mesher (surface_mesher.h) puts every triangle of an edge from voxel p (p in the chunk,
/// the edge's lower end) inside the cube of side 2 voxels centred on p's centre, and one end of that edge (p or a
/// neighbour) is solid-inside. The solid mask sets bit p when p or any of its 26 neighbours is solid-inside, so every
/// triangle's owner voxel is set. A query grows its box by one voxel and takes the voxels whose centres lie in it
/// (MaskIndex): any box touching that cube contains p's centre once grown. Water works the same way on water voxels.

#include <array>
#include <cstdint>
#include <span>

#include "vtp/terrain/status.h"
#include "vtp/terrain/voxel.h"

namespace vtp::physics {

/// What a chunk's 10^3 box (the chunk plus a 1-voxel apron) holds.
enum class MaskTag : std::uint8_t {
  kEmpty,      ///< No solid-inside and no water voxel: nothing to collide with; not kept in the index.
  kMixed,      ///< Anything else: masks stored. Solid next to water is mixed (a lake bed has triangles).
  kFullSolid,  ///< All 1000 voxels solid-inside: no triangle can exist, but a body here is inside rock.
  kFullWater,  ///< All 1000 voxels water: no triangle, fully submerged.
};

/// One bit per chunk voxel: bit x + 8 z of word y. [Unit: voxel, chunk-relative]
using SliceMask = std::array<std::uint64_t, 8>;

/// A chunk's masks. `solid` and `water` are meaningful for kMixed (all-zero otherwise): bit (x, y, z) is set when the
/// chunk voxel (x, y, z) or any of its 26 neighbours (apron included) is solid-inside, respectively water.
struct ChunkMasks {
  MaskTag tag = MaskTag::kEmpty;
  SliceMask solid{};
  SliceMask water{};
  friend bool operator==(const ChunkMasks&, const ChunkMasks&) = default;
};

/// The input box: the chunk plus a 1-voxel apron (terrain::grown(terrain::chunkBox(c), kMaskApron)), 10^3 voxels, in
/// terrain::World::readBox layout.
inline constexpr int kMaskApron = 1;
inline constexpr int kMaskBoxVolume = 1000;

/// Builds a chunk's masks from its 10^3 box with bit operations (no per-voxel branches). Error (kInvalidArgument)
/// when the box does not hold exactly 1000 voxels. Thread-safe (no shared state). Exact for voxels in canonical form
/// (air has occupancy 0), as World returns them; an air voxel of occupancy >= 128 may set solid bits (so an otherwise
/// empty box may come out kMixed), never a FULL tag and never fewer bits: the masks stay conservative.
Result<ChunkMasks> buildChunkMasks(std::span<const terrain::Voxel> box);

}  // namespace vtp::physics
