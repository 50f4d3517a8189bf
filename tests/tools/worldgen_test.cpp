// Properties of the procedural worlds of tools/worldgen, checked on the voxels a World ends up holding: the flat and
// empty presets exactly, the default terrain by what it must contain (water that cannot leak, ore of several kinds,
// caves, tunnels, overhanging cliffs, floating islands, a closed rim and floor, fractional surfaces) and by
// determinism (same seed, same bytes; cutting the world into other rects changes nothing).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "materials.h"
#include "noise.h"
#include "support/random_world.h"
#include "terrain_generator.h"
#include "terrain_layout.h"
#include "terrain_sampler.h"
#include "vtp/terrain/world.h"
#include "vtp/terrain/world_file.h"

using namespace vtp::terrain;
using namespace vtp::worldgen;

namespace {

// Every voxel of a box, read from a world in slabs that respect the per-call readBox cap (World::kMaxReadVoxels).
struct Grid {
  VoxelBox box;
  std::int32_t sx = 0, sy = 0, sz = 0;
  std::vector<Voxel> voxels;

  Grid(const World& world, VoxelBox b) : box(b), sx(b.max.x - b.min.x), sy(b.max.y - b.min.y), sz(b.max.z - b.min.z) {
    voxels.resize(std::size_t(b.volume()));
    const std::int64_t per_layer = std::int64_t(sx) * sy;
    const std::int32_t slab = std::int32_t(std::max<std::int64_t>(1, World::kMaxReadVoxels / per_layer));
    for (std::int32_t z = b.min.z; z < b.max.z; z += slab) {
      const VoxelBox part{{b.min.x, b.min.y, z}, {b.max.x, b.max.y, std::min(b.max.z, z + slab)}};
      const std::size_t offset = std::size_t(per_layer) * std::size_t(z - b.min.z);
      REQUIRE(world.readBox(part, std::span<Voxel>(voxels).subspan(offset, std::size_t(part.volume()))).ok());
    }
  }
  std::size_t index(std::int32_t x, std::int32_t y, std::int32_t z) const {
    return std::size_t(x - box.min.x) +
           std::size_t(sx) * (std::size_t(y - box.min.y) + std::size_t(sy) * std::size_t(z - box.min.z));
  }
  Voxel at(std::int32_t x, std::int32_t y, std::int32_t z) const { return voxels[index(x, y, z)]; }
  bool inside(std::int32_t x, std::int32_t y, std::int32_t z) const { return box.contains({x, y, z}); }
};

// Flood fill over 6-neighbours from `seeds` through voxels where pass(voxel) holds; returns the reached mask.
template <class Pass>
std::vector<bool> flood(const Grid& g, const std::vector<std::size_t>& seeds, Pass pass) {
  std::vector<bool> reached(g.voxels.size(), false);
  std::vector<std::size_t> stack;
  for (std::size_t s : seeds) {
    if (pass(g.voxels[s]) && !reached[s]) {
      reached[s] = true;
      stack.push_back(s);
    }
  }
  const std::size_t step_y = std::size_t(g.sx), step_z = std::size_t(g.sx) * std::size_t(g.sy);
  while (!stack.empty()) {
    const std::size_t i = stack.back();
    stack.pop_back();
    const std::size_t x = i % step_y, y = (i / step_y) % std::size_t(g.sy), z = i / step_z;
    const auto visit = [&](std::size_t j) {
      if (!reached[j] && pass(g.voxels[j])) {
        reached[j] = true;
        stack.push_back(j);
      }
    };
    if (x > 0) visit(i - 1);
    if (x + 1 < std::size_t(g.sx)) visit(i + 1);
    if (y > 0) visit(i - step_y);
    if (y + 1 < std::size_t(g.sy)) visit(i + step_y);
    if (z > 0) visit(i - step_z);
    if (z + 1 < std::size_t(g.sz)) visit(i + step_z);
  }
  return reached;
}

// The default world, generated once for all the cases that inspect it, with its voxels and connectivity.
struct DefaultWorld {
  std::unique_ptr<World> world;
  TerrainLayout layout;
  Grid grid;
  std::vector<bool> ground;  // solid-inside voxels connected to the floor
  std::vector<bool> sky;     // voxels not solid-inside that are connected to the top layer

  static std::unique_ptr<World> make() {
    auto w = generateWorld({Preset::kDefault, 1, presetSize(Preset::kDefault)});
    REQUIRE(w.ok());
    return std::move(w.value());
  }
  DefaultWorld() : world(make()), layout(planTerrain(1, presetSize(Preset::kDefault))), grid(*world, layout.box) {
    std::vector<std::size_t> bottom, top;
    for (std::int32_t z = grid.box.min.z; z < grid.box.max.z; ++z) {
      for (std::int32_t x = grid.box.min.x; x < grid.box.max.x; ++x) {
        bottom.push_back(grid.index(x, grid.box.min.y, z));
        top.push_back(grid.index(x, grid.box.max.y - 1, z));
      }
    }
    ground = flood(grid, bottom, [](Voxel v) { return isSolidInside(v); });
    sky = flood(grid, top, [](Voxel v) { return !isSolidInside(v); });
  }
};

const DefaultWorld& defaultWorld() {
  static const DefaultWorld instance;
  return instance;
}

// The highest voxel of column (x, z) for which pred(index) holds, or box.min.y - 1.
template <class Pred>
std::int32_t highest(const Grid& g, std::int32_t x, std::int32_t z, Pred pred) {
  for (std::int32_t y = g.box.max.y - 1; y >= g.box.min.y; --y) {
    if (pred(g.index(x, y, z))) return y;
  }
  return g.box.min.y - 1;
}

std::int32_t edgeDistance(const VoxelBox& box, std::int32_t x, std::int32_t z) {
  return std::min(std::min(x - box.min.x, box.max.x - 1 - x), std::min(z - box.min.z, box.max.z - 1 - z));
}

// Water voxels, those near the box's sides, and leaks: sides or bottoms of water voxels that are neither water nor
// solid material (air, or the outside of the box).
struct WaterCheck {
  std::size_t water = 0, near_rim = 0, leaks = 0;
};
WaterCheck checkWater(const Grid& g) {
  WaterCheck w;
  const VoxelBox& box = g.box;
  for (std::int32_t z = box.min.z; z < box.max.z; ++z) {
    for (std::int32_t y = box.min.y; y < box.max.y; ++y) {
      for (std::int32_t x = box.min.x; x < box.max.x; ++x) {
        if (!isWater(g.at(x, y, z))) continue;
        ++w.water;
        w.near_rim += edgeDistance(box, x, z) < 10;
        const std::int32_t n[5][3] = {{x - 1, y, z}, {x + 1, y, z}, {x, y - 1, z}, {x, y, z - 1}, {x, y, z + 1}};
        for (const auto& p : n) {
          const Voxel v = g.inside(p[0], p[1], p[2]) ? g.at(p[0], p[1], p[2]) : kAir;
          w.leaks += !isWater(v) && !isSolidMaterial(v.material);
        }
      }
    }
  }
  return w;
}

}  // namespace

TEST_CASE("worldgen noise: mix64 is splitmix64 and streams and gradient noise keep their stated properties") {
  SUBCASE("mix64 is the splitmix64 finaliser") {
    // First output of splitmix64 seeded with 0 (Vigna's reference implementation).
    CHECK(mix64(0) == 0xe220a8397b1dcdafull);
    CHECK(mix64(1) != mix64(0));
  }

  SUBCASE("a random stream repeats for its seed and stays in [0, 1)") {
    RandomStream a(42), b(42), c(43);
    bool differs = false;
    for (int i = 0; i < 1000; ++i) {
      const double u = a.uniform();
      CHECK(u == b.uniform());
      differs = differs || u != c.uniform();
      CHECK(u >= 0.0);
      CHECK(u < 1.0);
    }
    CHECK(differs);
  }

  SUBCASE("gradient noise vanishes on the lattice, stays within [-1, 1] and depends on the seed") {
    CHECK(gradientNoise2(5, 3.0, -7.0) == 0.0);
    CHECK(gradientNoise3(5, -2.0, 4.0, 9.0) == 0.0);
    double max2 = 0, max3 = 0;
    int differ = 0;
    RandomStream rng(9);
    for (int i = 0; i < 20000; ++i) {
      const double x = rng.range(-500, 500), y = rng.range(-500, 500), z = rng.range(-500, 500);
      const double n2 = gradientNoise2(5, x, z), n3 = gradientNoise3(5, x, y, z);
      max2 = std::max(max2, std::abs(n2));
      max3 = std::max(max3, std::abs(n3));
      differ += n3 != gradientNoise3(6, x, y, z);
      CHECK(gradientNoise3(5, x, y, z) == n3);
    }
    CHECK(max2 <= 1.0);
    CHECK(max3 <= 1.1);
    CHECK(max2 > 0.5);  // not degenerate
    CHECK(max3 > 0.5);
    CHECK(differ > 19000);
  }

  SUBCASE("gradient noise is continuous across lattice cells") {
    for (double x = -3.0; x <= 3.0; x += 1.0) {
      CHECK(std::abs(gradientNoise3(11, x - 1e-9, 0.3, 0.7) - gradientNoise3(11, x + 1e-9, 0.3, 0.7)) < 1e-6);
      CHECK(std::abs(gradientNoise2(11, x - 1e-9, 0.3) - gradientNoise2(11, x + 1e-9, 0.3)) < 1e-6);
    }
  }
}

TEST_CASE("worldgen presets: names and sizes and the material table are as documented and bad params are refused") {
  SUBCASE("names round-trip and unknown names are refused") {
    for (auto name : kPresetNames) {
      auto p = parsePreset(name);
      REQUIRE(p.has_value());
      CHECK(presetName(*p) == name);
    }
    CHECK_FALSE(parsePreset("nope").has_value());
    CHECK_FALSE(parsePreset("").has_value());
  }

  SUBCASE("the default size is at least 256x96x256 and the large one at least 1024x128x1024") {
    const VoxelCoord d = presetSize(Preset::kDefault), l = presetSize(Preset::kLarge);
    CHECK(d.x >= 256);
    CHECK(d.y >= 96);
    CHECK(d.z >= 256);
    CHECK(l.x >= 1024);
    CHECK(l.y >= 128);
    CHECK(l.z >= 1024);
    CHECK(validateParams({Preset::kDefault, 1, d}).ok());
    CHECK(validateParams({Preset::kLarge, 1, l}).ok());
  }

  SUBCASE("validation rejects empty, too tall, too large and too small terrain sizes") {
    CHECK_FALSE(validateParams({Preset::kFlat, 1, {0, 4, 4}}).ok());
    CHECK_FALSE(validateParams({Preset::kFlat, 1, {4, -1, 4}}).ok());
    CHECK_FALSE(validateParams({Preset::kFlat, 1, {8, kMaxWorldHeight + 1, 8}}).ok());
    CHECK_FALSE(validateParams({Preset::kEmpty, 1, {4096, 4096, 4096}}).ok());
    CHECK_FALSE(validateParams({Preset::kDefault, 1, {256, 64, 256}}).ok());
    CHECK(validateParams({Preset::kFlat, 1, {1, 1, 1}}).ok());
  }

  SUBCASE("validation keeps the world inside storage and loadable within a default load's memory limit") {
    // Centred on 0: X and Z up to 2^25 - 1 fit the storage range |v| < 2^24 (the empty preset stores no chunk).
    CHECK(validateParams({Preset::kEmpty, 1, {(1 << 25) - 1, 1, 1}}).ok());
    CHECK_FALSE(validateParams({Preset::kEmpty, 1, {1 << 25, 1, 1}}).ok());
    CHECK_FALSE(validateParams({Preset::kFlat, 1, {1 << 30, 1, 1}}).ok());
    CHECK_FALSE(validateParams({Preset::kFlat, 1, {1, 1, 1 << 25}}).ok());
    // A thin slab of 2^30 voxels spans 2^24 chunks (22 GiB at 1,408 bytes a dense chunk); 2^21 chunks (2.8 GiB)
    // load within the default 4 GiB.
    const vtp::Status slab = validateParams({Preset::kFlat, 1, {32768, 2, 16384}});
    REQUIRE_FALSE(slab.ok());
    CHECK(slab.error().message.find("16777216 chunks") != std::string::npos);
    CHECK(validateParams({Preset::kFlat, 1, {16384, 64, 1024}}).ok());
  }

  SUBCASE("generate refuses invalid params before writing anything") {
    auto world = vtp::test::makeWorld(worldgenConfig());
    CHECK_FALSE(generate({Preset::kFlat, 1, {0, 0, 0}}, *world).ok());
    CHECK(world->stats().stored_chunks == 0);
  }

  SUBCASE("the material table adds coal and iron to the defaults") {
    const MaterialTable t = worldgenMaterials();
    CHECK(t.find("rock") == kRock);
    CHECK(t.find("ore") == kOre);
    CHECK(t.find("coal") == kCoal);
    CHECK(t.find("iron") == kIron);
  }
}

TEST_CASE("worldgen flat and empty presets: flat is rock below y = 0 in its box and empty stores nothing") {
  SUBCASE("flat is full rock below y = 0 and air above, inside its box only") {
    for (VoxelCoord size : {VoxelCoord{32, 16, 32}, VoxelCoord{5, 3, 7}, VoxelCoord{9, 40, 1}}) {
      auto world = generateWorld({Preset::kFlat, 7, size});
      REQUIRE(world.ok());
      const VoxelBox box = worldBox(size);
      const VoxelBox around{{box.min.x - 9, box.min.y - 9, box.min.z - 9},
                            {box.max.x + 9, box.max.y + 9, box.max.z + 9}};
      const Grid g(**world, around);
      std::int64_t rock = 0;
      for (std::int32_t z = around.min.z; z < around.max.z; ++z) {
        for (std::int32_t y = around.min.y; y < around.max.y; ++y) {
          for (std::int32_t x = around.min.x; x < around.max.x; ++x) {
            const Voxel expected = box.contains({x, y, z}) && y < 0 ? Voxel{kRock, 255} : kAir;
            REQUIRE(g.at(x, y, z) == expected);
            rock += expected != kAir;
          }
        }
      }
      CHECK(rock == std::int64_t(size.x) * (size.y / 2) * size.z);
    }
  }

  SUBCASE("flat 32x16x32 is sixteen uniform chunks") {
    auto world = generateWorld({Preset::kFlat, 1, {32, 16, 32}});
    REQUIRE(world.ok());
    const WorldStats s = (*world)->stats();
    CHECK(s.stored_chunks == 16);
    CHECK(s.uniform_chunks == 16);
  }

  SUBCASE("empty stores no voxels") {
    auto world = generateWorld({Preset::kEmpty, 1, {64, 32, 64}});
    REQUIRE(world.ok());
    CHECK((*world)->stats().stored_chunks == 0);
  }
}

TEST_CASE("worldgen default world: the terrain holds the features it promises inside its box and under 4 MiB") {
  const DefaultWorld& d = defaultWorld();
  const Grid& g = d.grid;
  const VoxelBox& box = g.box;

  SUBCASE("the box is 256x96x256 centred on the origin and every stored chunk lies inside it") {
    CHECK(box == VoxelBox{{-128, -48, -128}, {128, 48, 128}});
    CHECK(box.min.y >= -256);
    CHECK(box.max.y <= 256);
    const auto guard = d.world->read();
    std::size_t outside = 0;
    d.world->forEachChunk(guard, [&](ChunkCoord c, const Chunk&) {
      const VoxelBox cb = chunkBox(c);
      outside += intersect(cb, box) != cb;
    });
    CHECK(outside == 0);
    CHECK(d.world->stats().stored_chunks > 0);
  }

  SUBCASE("voxels are canonical and use only table materials") {
    const MaterialTable table = worldgenMaterials();
    std::size_t bad = 0;
    for (Voxel v : g.voxels) bad += !isCanonical(v) || !table.contains(v.material);
    CHECK(bad == 0);
  }

  SUBCASE("the world file is under 4 MiB") { CHECK(encodeWorld(*d.world).size() < std::size_t(4) << 20); }

  SUBCASE("the floor is solid and the rim rises at least 8 voxels above the land inside it") {
    std::size_t open_floor = 0;
    std::int32_t rim_low = box.max.y, land_high = box.min.y;
    for (std::int32_t z = box.min.z; z < box.max.z; ++z) {
      for (std::int32_t x = box.min.x; x < box.max.x; ++x) {
        open_floor += !isSolidInside(g.at(x, box.min.y, z));
        const std::int32_t top = highest(g, x, z, [&](std::size_t i) { return d.ground[i]; });
        const std::int32_t edge = edgeDistance(box, x, z);
        if (edge == 0) rim_low = std::min(rim_low, top);
        if (edge >= 16) land_high = std::max(land_high, top);
      }
    }
    CHECK(open_floor == 0);
    CHECK(land_high > 0);
    CHECK(rim_low >= land_high + 8);
  }

  SUBCASE("surfaces hold fractional occupancy, so a smooth mesher makes slopes") {
    std::size_t columns = 0, fractional_tops = 0;
    for (std::int32_t z = box.min.z + 16; z < box.max.z - 16; ++z) {
      for (std::int32_t x = box.min.x + 16; x < box.max.x - 16; ++x) {
        const std::int32_t top = highest(g, x, z, [&](std::size_t i) { return isSolidMaterial(g.voxels[i].material); });
        if (top < box.min.y) continue;
        ++columns;
        const Voxel v = g.at(x, top, z);
        fractional_tops += v.occupancy < 255;
      }
    }
    CHECK(columns > 40000);
    CHECK(fractional_tops * 10 > columns * 8);  // over 80 % of the open-ground tops are partial
  }

  SUBCASE("a lake and a river hold water that cannot leak: water or solid beside and below every water voxel") {
    const WaterCheck w = checkWater(g);
    CHECK(w.water > 2000);
    CHECK(w.near_rim > 0);  // the river runs out to the rim
    CHECK(w.leaks == 0);
  }

  SUBCASE("ore veins come in several materials") {
    std::size_t count[256] = {};
    for (Voxel v : g.voxels) ++count[v.material];
    CHECK(count[kOre] > 200);
    CHECK(count[kCoal] > 200);
    CHECK(count[kIron] > 200);
    CHECK(count[kGrass] > 10000);
    CHECK(count[kDirt] > 10000);
    CHECK(count[kSand] > 500);
  }

  SUBCASE("caves: large pockets of air enclosed in rock") {
    std::size_t enclosed = 0;
    for (std::size_t i = 0; i < g.voxels.size(); ++i) enclosed += g.voxels[i] == kAir && !d.sky[i];
    CHECK(enclosed > 20000);
  }

  SUBCASE("tunnels: open-air passages from the surface run under ten or more voxels of ground") {
    std::size_t deep_open = 0;
    for (std::int32_t z = box.min.z; z < box.max.z; ++z) {
      for (std::int32_t x = box.min.x; x < box.max.x; ++x) {
        int cover = 0;
        for (std::int32_t y = box.max.y - 1; y >= box.min.y; --y) {
          const std::size_t i = g.index(x, y, z);
          if (d.ground[i]) {
            ++cover;
          } else if (d.sky[i] && cover >= 10) {
            ++deep_open;
          }
        }
      }
    }
    CHECK(deep_open > 100);
  }

  SUBCASE("mesas: cliffs overhang open air under their lip") {
    REQUIRE_FALSE(d.layout.mesas.empty());
    for (const Mesa& m : d.layout.mesas) {
      std::size_t lips = 0;
      const std::int32_t below_lip = std::int32_t(std::floor(m.top - m.flare_height)) - 1;
      for (std::int32_t z = std::int32_t(m.center.z - 40); z < std::int32_t(m.center.z + 40); ++z) {
        for (std::int32_t x = std::int32_t(m.center.x - 40); x < std::int32_t(m.center.x + 40); ++x) {
          if (!g.inside(x, below_lip, z)) continue;
          // Ground-connected rock near the top, with open air straight below it at the foot of the flare.
          const bool rock_above = d.ground[g.index(x, std::int32_t(std::floor(m.top)) - 2, z)];
          lips += rock_above && d.sky[g.index(x, below_lip, z)];
        }
      }
      CHECK(lips > 30);
    }
  }

  SUBCASE("floating islands: rock that touches nothing, high above the floor") {
    REQUIRE_FALSE(d.layout.islands.empty());
    std::size_t floating = 0;
    for (std::int32_t z = box.min.z; z < box.max.z; ++z) {
      for (std::int32_t y = 10; y < box.max.y; ++y) {
        for (std::int32_t x = box.min.x; x < box.max.x; ++x) {
          const std::size_t i = g.index(x, y, z);
          floating += isSolidInside(g.voxels[i]) && !d.ground[i];
        }
      }
    }
    CHECK(floating > 500);
  }

  SUBCASE("negative coordinates hold terrain too") {
    CHECK(isSolidInside(g.at(-100, -40, -100)));
    CHECK(isSolidInside(g.at(100, -40, 100)));
    CHECK(g.at(-100, 40, -100) == kAir);
  }
}

TEST_CASE("worldgen determinism: a seed gives the same world in any rects and other seeds keep the guarantees") {
  SUBCASE("a seed gives the same world every time, another seed another world") {
    const VoxelCoord size{128, 96, 128};
    auto a = generateWorld({Preset::kDefault, 7, size});
    auto b = generateWorld({Preset::kDefault, 7, size});
    auto c = generateWorld({Preset::kDefault, 8, size});
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    REQUIRE(c.ok());
    CHECK(encodeWorld(**a) == encodeWorld(**b));
    CHECK(encodeWorld(**a) != encodeWorld(**c));
  }

  SUBCASE("other seeds and sizes also hold their water, close their floor and keep to their box") {
    for (std::uint64_t seed : {2, 3, 4}) {
      const VoxelCoord size{130 + 3 * std::int32_t(seed), 96, 133};  // odd sizes: partial chunk columns
      auto world = generateWorld({Preset::kDefault, seed, size});
      REQUIRE(world.ok());
      const VoxelBox box = worldBox(size);
      const Grid g(**world, box);
      const WaterCheck w = checkWater(g);
      CHECK(w.water > 1000);
      CHECK(w.leaks == 0);
      std::size_t open_floor = 0;
      for (std::int32_t z = box.min.z; z < box.max.z; ++z) {
        for (std::int32_t x = box.min.x; x < box.max.x; ++x) open_floor += !isSolidInside(g.at(x, box.min.y, z));
      }
      CHECK(open_floor == 0);
      const auto guard = (*world)->read();
      std::size_t outside = 0;
      (*world)->forEachChunk(guard, [&](ChunkCoord c, const Chunk& chunk) {
        for (std::int32_t k = 0; k < kChunkVolume; ++k) {
          const VoxelCoord v{chunkOrigin(c).x + k % 8, chunkOrigin(c).y + (k / 8) % 8, chunkOrigin(c).z + k / 64};
          outside += !box.contains(v) && chunk.at(k % 8, (k / 8) % 8, k / 64) != kAir;
        }
      });
      CHECK(outside == 0);
    }
  }

  SUBCASE("cutting the world into other rects gives the same voxels") {
    // Feature culling per rect must never change a voxel: fill the default world in 24 x 40 rects (not chunk
    // aligned) and compare with the generator's chunk columns.
    const DefaultWorld& d = defaultWorld();
    const TerrainSampler sampler(d.layout);
    const VoxelBox& box = d.layout.box;
    const std::int32_t height = box.max.y - box.min.y;
    std::vector<Voxel> buffer;
    std::size_t mismatches = 0;
    for (std::int32_t z0 = box.min.z; z0 < box.max.z; z0 += 40) {
      for (std::int32_t x0 = box.min.x; x0 < box.max.x; x0 += 24) {
        const ColumnRect rect{x0, z0, std::min(box.max.x, x0 + 24), std::min(box.max.z, z0 + 40)};
        const std::int32_t w = rect.x1 - rect.x0, dz = rect.z1 - rect.z0;
        buffer.assign(std::size_t(w) * std::size_t(height) * std::size_t(dz), kAir);
        sampler.fillColumns(rect, buffer);
        for (std::int32_t z = rect.z0; z < rect.z1; ++z) {
          for (std::int32_t y = box.min.y; y < box.max.y; ++y) {
            for (std::int32_t x = rect.x0; x < rect.x1; ++x) {
              const Voxel v =
                  buffer[std::size_t(x - rect.x0) + std::size_t(w) * (std::size_t(y - box.min.y) +
                                                                      std::size_t(height) * std::size_t(z - rect.z0))];
              mismatches += v != d.grid.at(x, y, z);
            }
          }
        }
      }
    }
    CHECK(mismatches == 0);
  }
}
