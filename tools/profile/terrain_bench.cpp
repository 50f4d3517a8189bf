#include "terrain_bench.h"

#include <algorithm>
#include <random>
#include <vector>

#include "report.h"
#include "timing.h"
#include "vtp/terrain/world_file.h"

namespace vtp::tools {
namespace {

using namespace vtp::terrain;

// Boxes of chunk + `apron` voxels on every side, one per chunk in `chunks`.
std::vector<VoxelBox> apronBoxes(const std::vector<ChunkCoord>& chunks, int apron) {
  std::vector<VoxelBox> boxes;
  for (ChunkCoord c : chunks) boxes.push_back(grown(chunkBox(c), apron));
  return boxes;
}

// Median ns per readBox over the boxes, in batches of at least 1000 calls (cycling through the boxes).
double readBoxNs(const World& world, const std::vector<VoxelBox>& boxes) {
  const std::size_t n = std::max<std::size_t>(1000, boxes.size());
  std::vector<Voxel> out(std::size_t(boxes.front().volume()));
  std::uint64_t sink = 0;
  const double ns = medianNsPerCall(
      [&](std::size_t calls) {
        Cycle box(boxes.size()), voxel(out.size());
        for (std::size_t i = 0; i < calls; ++i) {
          (void)world.readBox(boxes[box.next()], out);
          sink += out[voxel.next()].occupancy;
        }
      },
      n);
  return ns + double(sink & 0) ;
}

// The naive gather a mesher would otherwise do: World::voxel per voxel. A reference row.
double naiveGatherNs(const World& world, const std::vector<VoxelBox>& boxes) {
  std::uint64_t sink = 0;
  const std::size_t n = std::min<std::size_t>(boxes.size(), 2000);
  const double ns = medianNsPerCall(
      [&](std::size_t calls) {
        Cycle box(boxes.size());
        for (std::size_t i = 0; i < calls; ++i) {
          const VoxelBox& b = boxes[box.next()];
          for (std::int32_t z = b.min.z; z < b.max.z; ++z)
            for (std::int32_t y = b.min.y; y < b.max.y; ++y)
              for (std::int32_t x = b.min.x; x < b.max.x; ++x) sink += world.voxel({x, y, z}).occupancy;
        }
      },
      n);
  return ns + double(sink & 0);
}

}  // namespace

Result<nlohmann::json> benchTerrain(const std::filesystem::path& path, std::uint64_t seed) {
  Result<LoadedWorld> loaded = loadWorldFile(path);
  if (!loaded) return loaded.error();
  const World& world = *loaded->world;
  const double load_ms = medianMs([&] { (void)loadWorldFile(path); });

  std::vector<ChunkCoord> all, dense;
  {
    auto guard = world.read();
    world.forEachChunk(guard, [&](ChunkCoord c, const Chunk& chunk) {
      all.push_back(c);
      if (!chunk.isUniform()) dense.push_back(c);
    });
  }
  if (all.empty()) return Error{ErrorCode::kInvalidArgument, "world has no stored chunks to measure", {}};
  // A fixed order independent of the hash map's layout, shuffled so successive boxes are not neighbours in memory.
  std::sort(all.begin(), all.end());
  std::sort(dense.begin(), dense.end());
  if (dense.empty()) dense = all;
  std::vector<ChunkCoord> shuffled = dense;
  std::mt19937_64 rng(seed);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);

  const WorldStats stats = world.stats();
  nlohmann::json j;
  j["world"] = jsonText(path.string());
  j["stored_chunks"] = stats.stored_chunks;
  j["uniform_chunks"] = stats.uniform_chunks;
  j["dense_chunks"] = stats.dense_chunks;
  j["load_ms"] = load_ms;
  j["memory_bytes"] = stats.chunk_bytes + stats.table_bytes;
  j["memory_per_stored_chunk_bytes"] = double(stats.chunk_bytes + stats.table_bytes) / double(stats.stored_chunks);
  // L1-resident: one box over and over (timing.h's per-call rule). Sweep: every dense chunk in (z, y, x) order, as
  // a mesher or mask builder walks a world; neighbours' voxels come from L2/L3. Shuffled: the same chunks in random
  // order, the cold worst case. The naive row is World::voxel per voxel, what readBox replaces.
  j["read_box"]["box10_l1_resident_median_ns"] = readBoxNs(world, apronBoxes({dense.front()}, 1));
  j["read_box"]["box10_sweep_median_ns"] = readBoxNs(world, apronBoxes(dense, 1));
  j["read_box"]["box10_sweep_all_chunks_median_ns"] = readBoxNs(world, apronBoxes(all, 1));
  j["read_box"]["box10_shuffled_median_ns"] = readBoxNs(world, apronBoxes(shuffled, 1));
  j["read_box"]["box12_l1_resident_median_ns"] = readBoxNs(world, apronBoxes({dense.front()}, 2));
  j["read_box"]["box12_sweep_median_ns"] = readBoxNs(world, apronBoxes(dense, 2));
  j["read_box"]["box10_naive_voxel_loop_median_ns"] = naiveGatherNs(world, apronBoxes(dense, 1));
  j["read_box"]["target_box10_ns"] = 500;
  return j;
}

}  // namespace vtp::tools
