// MaskIndex::validate: the index against a fresh build of every chunk from the world, and its lock-free grid paths
// against its hash table. Built in every build type; for tests after random edits (no edit may run meanwhile).
//
// It works through the index's public answers only (MaskIndex::State is private to mask_index.cpp): masks() reads the
// hash table under the lock; query(), the batched query, mayOwnTriangles() and mayHoldWater() read the dense grid
// lock-free while there is one (else the table again, and the comparison is trivially true).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "vtp/physics/mask_index.h"

namespace vtp::physics {

namespace {

using terrain::ChunkCoord;

[[gnu::cold]] Status broken(const std::string& what) {
  return Error{ErrorCode::kCorrupt, "MaskIndex::validate: " + what, {}};
}

std::string text(ChunkCoord c) {
  return "chunk (" + std::to_string(c.x) + "," + std::to_string(c.y) + "," + std::to_string(c.z) + ")";
}

// Every stored chunk and its 26 neighbours, sorted, without repeats: only these can have a non-empty 10^3 box.
std::vector<ChunkCoord> candidates(const terrain::World& world) {
  std::vector<ChunkCoord> out;
  {
    auto guard = world.read();
    world.forEachChunk(guard, [&](ChunkCoord c, const terrain::Chunk&) {
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) out.push_back({c.x + dx, c.y + dy, c.z + dz});
    });
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// What the index must hold for chunk c: its masks built from the world now (tag kEmpty when the box is empty, or
// cannot be read, which the index skips too).
ChunkMasks freshMasks(const terrain::World& world, ChunkCoord c, std::vector<terrain::Voxel>& box) {
  if (!world.readBoxBetweenEdits(terrain::grown(terrain::chunkBox(c), kMaskApron), box).ok()) return {};
  Result<ChunkMasks> built = buildChunkMasks(box);
  return built.ok() ? *built : ChunkMasks{};
}

// The answer a query of voxels [2 b, 2 b + 1] of chunk c (block b of 4 per axis) must give, from the chunk's masks
// `m` as the table holds them: the chunk, touched when a solid or water bit of those 8 voxels is set or it is FULL.
bool expectedTouch(ChunkCoord c, const ChunkMasks& m, const std::array<int, 3>& b, ChunkTouch& out) {
  bool solid = m.tag == MaskTag::kFullSolid, water = m.tag == MaskTag::kFullWater;
  if (m.tag == MaskTag::kMixed) {
    for (int y = 2 * b[1]; y <= 2 * b[1] + 1; ++y)
      for (int z = 2 * b[2]; z <= 2 * b[2] + 1; ++z)
        for (int x = 2 * b[0]; x <= 2 * b[0] + 1; ++x) {
          solid = solid || (m.solid[std::size_t(y)] >> (x + 8 * z) & 1) != 0;
          water = water || (m.water[std::size_t(y)] >> (x + 8 * z) & 1) != 0;
        }
  }
  out = ChunkTouch{c, solid, water, m.tag};
  return solid || water;
}

bool anyBit(const SliceMask& words) {
  std::uint64_t any = 0;
  for (const std::uint64_t w : words) any |= w;
  return any != 0;
}

bool sameTouches(std::span<const ChunkTouch> got, bool touched, const ChunkTouch& want) {
  if (!touched) return got.empty();
  return got.size() == 1 && got[0].chunk == want.chunk && got[0].solid == want.solid &&
         got[0].water == want.water && got[0].tag == want.tag;
}

// Chunks whose every voxel query lies within physics' range (|x| < 2^16 voxels, with a chunk to spare).
bool queryable(ChunkCoord c) {
  constexpr std::int64_t kChunks = 65536 / terrain::kChunkSize - 2;
  return std::max({std::abs(std::int64_t(c.x)), std::abs(std::int64_t(c.y)), std::abs(std::int64_t(c.z))}) <= kChunks;
}

}  // namespace

Status MaskIndex::validate() const {
  const std::vector<ChunkCoord> chunks = candidates(m_world);
  std::vector<terrain::Voxel> box(kMaskBoxVolume);
  std::size_t entries = 0, mixed = 0, full_solid = 0, full_water = 0;
  std::vector<ChunkTouch> one;
  std::vector<Aabb> blocks;
  TouchBatch batch;
  for (const ChunkCoord c : chunks) {
    // The table's entry equals a fresh build of the chunk.
    const ChunkMasks held = masks(c), fresh = freshMasks(m_world, c, box);
    if (held != fresh) {
      return broken(text(c) + " holds masks of tag " + std::to_string(int(held.tag)) + " that differ from a fresh " +
                    "build's (tag " + std::to_string(int(fresh.tag)) + ")");
    }
    if (held.tag != MaskTag::kEmpty) ++entries;
    mixed += held.tag == MaskTag::kMixed;
    full_solid += held.tag == MaskTag::kFullSolid;
    full_water += held.tag == MaskTag::kFullWater;
    // The grid's answers (lock-free paths) equal the table's.
    const bool owns = held.tag == MaskTag::kMixed && anyBit(held.solid);
    const bool wet = held.tag == MaskTag::kFullWater || (held.tag == MaskTag::kMixed && anyBit(held.water));
    if (mayOwnTriangles(c) != owns) return broken("mayOwnTriangles(" + text(c) + ") disagrees with its masks");
    if (mayHoldWater(c) != wet) return broken("mayHoldWater(" + text(c) + ") disagrees with its masks");
    if (!queryable(c)) continue;
    // Each 2x2x2 block of the chunk's voxels, by query() and by one batched query: a box whose grown box holds
    // exactly the centres of voxels [v, v + 1] on each axis is [v + 1, v + 1] (query_range.h).
    blocks.clear();
    const terrain::VoxelCoord origin = terrain::chunkOrigin(c);
    for (int bz = 0; bz < 4; ++bz)
      for (int by = 0; by < 4; ++by)
        for (int bx = 0; bx < 4; ++bx) {
          const WorldVec3 p{(origin.x + 2 * bx + 1) * m_voxel_size, (origin.y + 2 * by + 1) * m_voxel_size,
                                 (origin.z + 2 * bz + 1) * m_voxel_size};
          blocks.push_back({p, p});
        }
    if (Status s = query(std::span<const Aabb>(blocks), batch); !s) {
      return broken("the batched query of " + text(c) + "'s voxel blocks failed: " + s.error().message);
    }
    for (int i = 0; i < 64; ++i) {
      const std::array<int, 3> b{i & 3, i >> 2 & 3, i >> 4};
      if (Status s = query(blocks[std::size_t(i)], one); !s) {
        return broken("the query of " + text(c) + "'s voxel block failed: " + s.error().message);
      }
      ChunkTouch want;
      const bool touched = expectedTouch(c, held, b, want);
      const std::string where = " of " + text(c) + "'s voxels from (" + std::to_string(2 * b[0]) + "," +
                                std::to_string(2 * b[1]) + "," + std::to_string(2 * b[2]) + ")";
      if (!sameTouches(one, touched, want)) return broken("query()" + where + " disagrees with the chunk's masks");
      if (!sameTouches(batch.touches(std::size_t(i)), touched, want)) {
        return broken("the batched query" + where + " disagrees with the chunk's masks");
      }
    }
  }
  // No entry besides those: the counts match.
  const MaskIndexStats st = stats();
  if (st.entries != entries || st.mixed != mixed || st.full_solid != full_solid || st.full_water != full_water) {
    return broken("the index counts " + std::to_string(st.entries) + " entries (" + std::to_string(st.mixed) +
                  " mixed, " + std::to_string(st.full_solid) + " full solid, " + std::to_string(st.full_water) +
                  " full water), the world's chunks give " + std::to_string(entries) + " (" + std::to_string(mixed) +
                  ", " + std::to_string(full_solid) + ", " + std::to_string(full_water) + ")");
  }
  return {};
}

}  // namespace vtp::physics
