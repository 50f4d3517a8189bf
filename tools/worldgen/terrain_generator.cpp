// Presets and the streaming loop: plan once, then sample and write one chunk column at a time.
#include "terrain_generator.h"

#include <algorithm>
#include <string>
#include <vector>

#include "materials.h"
#include "terrain_layout.h"
#include "terrain_sampler.h"
#include "vtp/terrain/world_file.h"

namespace vtp::worldgen {

using terrain::VoxelBox;
using terrain::VoxelCoord;

std::optional<Preset> parsePreset(std::string_view name) {
  for (std::size_t i = 0; i < kPresetNames.size(); ++i) {
    if (kPresetNames[i] == name) return Preset(i);
  }
  return std::nullopt;
}

std::string_view presetName(Preset preset) { return kPresetNames[std::size_t(preset)]; }

bool presetTakesSize(Preset preset) { return preset == Preset::kFlat || preset == Preset::kEmpty; }

VoxelCoord presetSize(Preset preset) {
  switch (preset) {
    case Preset::kDefault: return {256, 96, 256};
    case Preset::kLarge: return {1024, 128, 1024};
    case Preset::kFlat:
    case Preset::kEmpty: break;
  }
  return {64, 32, 64};
}

Status validateParams(const WorldgenParams& params) {
  const VoxelCoord s = params.size;
  const auto invalid = [](std::string message) { return Error{ErrorCode::kInvalidArgument, std::move(message), {}}; };
  if (s.x < 1 || s.y < 1 || s.z < 1) return invalid("size must be at least 1 voxel on every axis");
  if (s.y > kMaxWorldHeight) return invalid("size Y must be at most " + std::to_string(kMaxWorldHeight) + " voxels");
  if (std::int64_t(s.x) * s.y * s.z > kMaxWorldVoxels) {
    return invalid("size must hold at most 2^30 voxels (X*Y*Z)");
  }
  // The world is centred on 0 (worldBox); storage ends 2^24 voxels from it.
  const VoxelBox box = worldBox(s);
  if (!terrain::insideStorage(box)) {
    return invalid("size X and Z must be at most 2^25 - 1 voxels (storage ends at 2^24)");
  }
  // Every chunk of a generated world may be dense: it must load within a default load's memory limit.
  const terrain::LoadOptions load;
  const std::uint64_t chunks = std::uint64_t(terrain::chunkCount(box));
  if (params.preset != Preset::kEmpty && chunks * terrain::kDenseChunkLoadBytes > load.max_memory_bytes) {
    return invalid("size spans " + std::to_string(chunks) + " chunks, more than a world file loads within its " +
                   "default " + std::to_string(load.max_memory_bytes >> 20) + " MiB (" +
                   std::to_string(terrain::kDenseChunkLoadBytes) + " bytes a dense chunk)");
  }
  const bool terrain = params.preset == Preset::kDefault || params.preset == Preset::kLarge;
  if (terrain && (s.x < kMinTerrainSize.x || s.y < kMinTerrainSize.y || s.z < kMinTerrainSize.z)) {
    return invalid("terrain presets need a size of at least " + std::to_string(kMinTerrainSize.x) + "," +
                   std::to_string(kMinTerrainSize.y) + "," + std::to_string(kMinTerrainSize.z));
  }
  return {};
}

terrain::WorldConfig worldgenConfig() {
  terrain::WorldConfig config;
  config.voxel_size = 1.0;
  config.materials = worldgenMaterials();
  return config;
}

Status generate(const WorldgenParams& params, terrain::World& world) {
  if (Status s = validateParams(params); !s) return s;
  const VoxelBox box = worldBox(params.size);
  const std::int64_t column_voxels = std::int64_t(terrain::kChunkSize) * terrain::kChunkSize * params.size.y;
  if (column_voxels > world.limits().max_edit_voxels) {
    return Error{ErrorCode::kLimitExceeded, "a chunk column of this height exceeds the world's per-edit voxel cap", {}};
  }
  if (params.preset == Preset::kEmpty) return {};

  std::optional<TerrainSampler> sampler;
  if (params.preset != Preset::kFlat) sampler.emplace(planTerrain(params.seed, params.size));

  // One chunk column at a time, in z-then-x order: the buffer is the only copy of voxels outside the World.
  std::vector<terrain::Voxel> buffer;
  const std::int32_t cz0 = terrain::floorDivChunk(box.min.z), cz1 = terrain::floorDivChunk(box.max.z - 1);
  const std::int32_t cx0 = terrain::floorDivChunk(box.min.x), cx1 = terrain::floorDivChunk(box.max.x - 1);
  for (std::int32_t cz = cz0; cz <= cz1; ++cz) {
    for (std::int32_t cx = cx0; cx <= cx1; ++cx) {
      const std::int32_t x0 = std::max(box.min.x, cx * terrain::kChunkSize);
      const std::int32_t x1 = std::min(box.max.x, (cx + 1) * terrain::kChunkSize);
      const std::int32_t z0 = std::max(box.min.z, cz * terrain::kChunkSize);
      const std::int32_t z1 = std::min(box.max.z, (cz + 1) * terrain::kChunkSize);
      const VoxelBox region{{x0, box.min.y, z0}, {x1, box.max.y, z1}};
      buffer.assign(std::size_t(region.volume()), terrain::kAir);
      if (sampler) {
        sampler->fillColumns({x0, z0, x1, z1}, buffer);
      } else {
        // Flat: full rock in every voxel below y = 0 (layout x fastest, then y, then z).
        const std::size_t width = std::size_t(x1 - x0), height = std::size_t(box.max.y - box.min.y);
        for (std::size_t k = 0; k < std::size_t(z1 - z0); ++k) {
          for (std::int32_t y = box.min.y; y < std::min(box.max.y, 0); ++y) {
            const std::size_t row = (std::size_t(y - box.min.y) + height * k) * width;
            std::fill_n(buffer.begin() + std::ptrdiff_t(row), width, terrain::Voxel{kRock, 255});
          }
        }
      }
      auto written = world.writeRegion(region, buffer);
      if (!written) return written.error();
    }
  }
  return {};
}

Result<std::unique_ptr<terrain::World>> generateWorld(const WorldgenParams& params) {
  auto world = terrain::World::create(worldgenConfig());
  if (!world) return world.error();
  if (Status s = generate(params, **world); !s) return s.error();
  return std::move(world).value();
}

}  // namespace vtp::worldgen
