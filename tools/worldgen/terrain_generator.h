#pragma once
/// \file
/// The generator behind `vtp-worldgen`: a preset, a seed and a size become the voxels of a World, written through
/// the public edit API one chunk column at a time (World::writeRegion), so even the large preset never holds more
/// than one column's voxels outside the World.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "vtp/terrain/coords.h"
#include "vtp/terrain/status.h"
#include "vtp/terrain/world.h"

namespace vtp::worldgen {

/// What kind of world to make.
enum class Preset : std::uint8_t {
  kDefault,  ///< 256 x 96 x 256 procedural terrain: hills, cliffs, caves, water, islands, ore, a rim.
  kLarge,    ///< The same terrain over 1024 x 128 x 1024 (benchmarks; features scale with the area).
  kFlat,     ///< Rock below y = 0, air above, over the size's box.
  kEmpty,    ///< No voxels at all.
};

/// Preset names as the command line spells them, in Preset order.
inline constexpr std::array<std::string_view, 4> kPresetNames = {"default", "large", "flat", "empty"};

/// The preset named `name` (one of kPresetNames), or nullopt.
std::optional<Preset> parsePreset(std::string_view name);
/// The command-line name of a preset.
std::string_view presetName(Preset preset);
/// True for the presets whose size the caller chooses (flat and empty); the terrain presets have fixed sizes.
bool presetTakesSize(Preset preset);
/// The size a preset generates when none is given: 256,96,256 / 1024,128,1024 / 64,32,64 / 64,32,64. [Unit: voxel]
terrain::VoxelCoord presetSize(Preset preset);

/// Largest generated box, in voxels, and largest height: a chunk column (8 x Y x 8) must fit in one edit.
inline constexpr std::int64_t kMaxWorldVoxels = std::int64_t(1) << 30;
inline constexpr std::int32_t kMaxWorldHeight = 4096;

/// Everything that determines a generated world. Equal parameters give byte-identical world files.
struct WorldgenParams {
  Preset preset = Preset::kDefault;
  std::uint64_t seed = 1;                  ///< Any value; the flat and empty presets ignore it.
  terrain::VoxelCoord size{256, 96, 256};  ///< X, Y, Z in voxels; x and z centred on 0, y from -Y/2.
};

/// Checks the size: every axis >= 1 (terrain presets: at least kMinTerrainSize), height <= kMaxWorldHeight, volume
/// <= kMaxWorldVoxels. kInvalidArgument naming the problem otherwise.
Status validateParams(const WorldgenParams& params);

/// The config generated worlds use: voxel size 1, worldgenMaterials() (materials.h), default edit limits.
terrain::WorldConfig worldgenConfig();

/// Writes the preset's voxels into `world`, chunk column by chunk column, each column with one writeRegion. The
/// world should be empty (voxels outside the generated box are left as they are) and its material table must hold
/// worldgenMaterials(). Fails, before writing anything, on invalid params (kInvalidArgument) or when a chunk column
/// exceeds the world's per-edit cap (kLimitExceeded); passes on any error writeRegion returns.
Status generate(const WorldgenParams& params, terrain::World& world);

/// Creates a world with worldgenConfig() and generates into it.
Result<std::unique_ptr<terrain::World>> generateWorld(const WorldgenParams& params);

}  // namespace vtp::worldgen
