#include "support/random_world.h"

#include <doctest/doctest.h>

#include <set>

#include "vtp/terrain/hash.h"

namespace vtp::test {

using namespace vtp::terrain;

std::unique_ptr<World> makeWorld(WorldConfig config) {
  auto world = World::create(std::move(config));
  REQUIRE(world.ok());
  return std::move(world.value());
}

Voxel randomVoxel(std::mt19937_64& rng) {
  const int kind = int(rng() % 4);
  if (kind == 0) return kAir;
  const auto occ = std::uint8_t(1 + rng() % 255);
  if (kind == 1) return {kWaterMaterial, occ};
  return {std::uint8_t(2 + rng() % 5), occ};
}

void randomEdits(World& world, const VoxelBox& region, int edits, std::mt19937_64& rng) {
  auto coord = [&](std::int32_t lo, std::int32_t hi) {
    return lo + std::uniform_real_distribution<double>(0.0, double(hi - lo))(rng);
  };
  for (int i = 0; i < edits; ++i) {
    const Vec3d c{coord(region.min.x, region.max.x), coord(region.min.y, region.max.y), coord(region.min.z, region.max.z)};
    const double r = 0.5 + std::uniform_real_distribution<double>(0.0, 6.0)(rng);
    const auto material = std::uint8_t(1 + rng() % 6);
    const EditOp op = rng() % 3 == 0 ? EditOp::kClear : EditOp::kFill;
    Shape shape;
    switch (rng() % 3) {
      case 0: shape = SphereShape{c, r}; break;
      case 1: shape = BoxShape{{c.x - r, c.y - r, c.z - r}, {c.x + r, c.y + 0.5 * r, c.z + r}}; break;
      default: shape = CylinderShape{c, r, 2 * r}; break;
    }
    REQUIRE(world.apply(ShapeEdit{shape, op, material}).ok());
  }
}

std::vector<Voxel> voxelsOneByOne(const World& world, const VoxelBox& box) {
  std::vector<Voxel> out;
  out.reserve(std::size_t(box.volume()));
  for (std::int32_t z = box.min.z; z < box.max.z; ++z) {
    for (std::int32_t y = box.min.y; y < box.max.y; ++y) {
      for (std::int32_t x = box.min.x; x < box.max.x; ++x) out.push_back(world.voxel({x, y, z}));
    }
  }
  return out;
}

std::uint64_t contentHash(const World& world) { return worldHash(world); }

std::vector<ChunkCoord> chunksNearStored(const World& world) {
  std::set<ChunkCoord> near;
  const WorldSnapshot snapshot = world.snapshot();
  for (const auto& entry : snapshot.chunks()) {
    for (int dz = -1; dz <= 1; ++dz) {
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) near.insert({entry.coord.x + dx, entry.coord.y + dy, entry.coord.z + dz});
      }
    }
  }
  return {near.begin(), near.end()};
}

}  // namespace vtp::test
