// Feature placement by rejection sampling from one seeded RandomStream: each feature draws its parameters, is
// checked against the features placed before it, and is retried a bounded number of times (then skipped). Every
// draw happens in a fixed order, so a seed always gives the same layout.
#include "terrain_layout.h"

#include <algorithm>
#include <cmath>

#include "noise.h"
#include "terrain_sampler.h"

namespace vtp::worldgen {

using terrain::Vec3d;
using terrain::VoxelBox;
using terrain::VoxelCoord;

namespace {

// Random streams of the layout, one per feature kind, so adding a kind later leaves the others in place.
constexpr std::uint64_t kLakeStream = 1, kMesaStream = 2, kIslandStream = 3, kTunnelStream = 4;
constexpr std::uint64_t kRiverNoiseStream = 200;
constexpr int kAttempts = 200;
// The rim (box top - 6) clears the highest land by 8 in the smallest box allowed.
static_assert(kMinTerrainSize.y / 2 - 6 - 8 >= kMaxMesaTop && kMaxMesaTop > kMaxHillHeight);
// The sampler's mesa outline wobble and flare slope (terrain_sampler.cpp), for footprints. [Unit: voxel]
constexpr double kMesaReach = 2.5;
constexpr double kFlareSlope = 0.9;

double distance(Point2 a, Point2 b) { return std::sqrt((a.x - b.x) * (a.x - b.x) + (a.z - b.z) * (a.z - b.z)); }

// The highest ground within `radius` of `c`, sampled every 2 voxels, and never below the water.
double groundMax(const TerrainSampler& ground, Point2 c, double radius, double water_level) {
  double top = water_level;
  for (double dz = -radius; dz <= radius; dz += 2.0) {
    for (double dx = -radius; dx <= radius; dx += 2.0) {
      if (dx * dx + dz * dz <= radius * radius) top = std::max(top, ground.surfaceHeight(c.x + dx, c.z + dz));
    }
  }
  return top;
}

double mesaFootprint(const Mesa& m) { return m.radius + kMesaReach + m.flare_height * kFlareSlope; }

// The open interior: inside the rim, as [x0, x1) x [z0, z1) in voxels.
struct Interior {
  double x0, z0, x1, z1;
  bool holds(Point2 p, double margin) const {
    return p.x >= x0 + margin && p.x <= x1 - margin && p.z >= z0 + margin && p.z <= z1 - margin;
  }
  Point2 draw(RandomStream& rng, double margin) const {
    const double x = rng.range(x0 + margin, std::max(x0 + margin, x1 - margin));
    const double z = rng.range(z0 + margin, std::max(z0 + margin, z1 - margin));
    return {x, z};
  }
};

void placeLakes(TerrainLayout& layout, const Interior& inner, int count, double min_side) {
  RandomStream rng(deriveSeed(layout.seed, kLakeStream));
  std::vector<Point2> centers;
  for (int i = 0; i < count; ++i) {
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      const double radius = std::min(rng.range(18.0, 26.0), 0.2 * min_side);
      const double depth = rng.range(7.0, 10.0);
      const Point2 center = inner.draw(rng, radius + 12.0);
      if (!inner.holds(center, radius + 12.0)) continue;
      const bool crowded = std::any_of(layout.water.begin(), layout.water.end(), [&](const WaterBody& w) {
        return distance(w.path[0], center) < w.radius + radius + 40.0;
      });
      if (crowded) continue;
      layout.water.push_back({{center}, radius, depth});
      break;
    }
  }
}

// A river from each lake to the nearest side of the box, meandering sideways; it ends under the rim.
void placeRivers(TerrainLayout& layout, const Interior& inner) {
  const VoxelBox& box = layout.box;
  const std::size_t lakes = layout.water.size();
  for (std::size_t i = 0; i < lakes; ++i) {
    const Point2 start = layout.water[i].path[0];
    RandomStream rng(deriveSeed(layout.seed, kRiverNoiseStream + i));
    const double to_side[4] = {start.x - box.min.x, box.max.x - start.x, start.z - box.min.z, box.max.z - start.z};
    const int side = int(std::min_element(std::begin(to_side), std::end(to_side)) - std::begin(to_side));
    const double dir_x = side == 0 ? -1.0 : (side == 1 ? 1.0 : 0.0);
    const double dir_z = side == 2 ? -1.0 : (side == 3 ? 1.0 : 0.0);
    const double length = to_side[side] + 8.0;
    const double amplitude = rng.range(10.0, 16.0);
    const std::uint64_t noise_seed = rng.next();
    const double wavelength = rng.range(40.0, 60.0);
    // Meander relative to the start, so the river leaves the lake's centre.
    const double offset0 = gradientNoise2(noise_seed, 0.0, 0.37);
    WaterBody river{{}, rng.range(4.5, 6.0), rng.range(3.0, 4.5)};
    for (double along = 0.0;; along += 8.0) {
      const double lateral = amplitude * (gradientNoise2(noise_seed, along / wavelength, 0.37) - offset0);
      Point2 p{start.x + dir_x * along + dir_z * lateral, start.z + dir_z * along + dir_x * lateral};
      // Keep the meanders off the rim: clamp the sideways coordinate into the interior.
      const double margin = river.radius + 10.0;
      if (dir_x != 0.0) p.z = std::clamp(p.z, inner.z0 + margin, std::max(inner.z0 + margin, inner.z1 - margin));
      if (dir_z != 0.0) p.x = std::clamp(p.x, inner.x0 + margin, std::max(inner.x0 + margin, inner.x1 - margin));
      river.path.push_back(p);
      if (along >= length) break;
    }
    layout.water.push_back(std::move(river));
  }
}

void placeMesas(TerrainLayout& layout, const Interior& inner, const TerrainSampler& ground, int count) {
  RandomStream rng(deriveSeed(layout.seed, kMesaStream));
  for (int i = 0; i < count; ++i) {
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      Mesa m;
      m.radius = rng.range(11.0, 16.0);
      m.flare_height = rng.range(5.0, 8.0);
      const double rise = rng.range(8.0, 12.0);
      const double footprint = mesaFootprint(m);
      m.center = inner.draw(rng, footprint + 6.0);
      if (!inner.holds(m.center, footprint + 6.0)) continue;
      if (ground.waterDistance(m.center.x, m.center.z) < footprint + 12.0) continue;
      // The top stands `rise` over the highest ground under the cliff's foot.
      m.top = groundMax(ground, m.center, m.radius, layout.water_level) + rise;
      if (m.top > kMaxMesaTop - 1.0) continue;
      const bool crowded = std::any_of(layout.mesas.begin(), layout.mesas.end(), [&](const Mesa& o) {
        return distance(o.center, m.center) < mesaFootprint(o) + footprint + 10.0;
      });
      if (crowded) continue;
      layout.mesas.push_back(m);
      break;
    }
  }
}

void placeIslands(TerrainLayout& layout, const Interior& inner, const TerrainSampler& ground, int count) {
  RandomStream rng(deriveSeed(layout.seed, kIslandStream));
  for (int i = 0; i < count; ++i) {
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      Island is;
      is.radius = rng.range(6.0, 10.0);
      is.thickness = rng.range(2.5, 3.5);
      is.depth = is.radius * rng.range(1.0, 1.4);
      const Point2 c = inner.draw(rng, is.radius + 10.0);
      const double lift = rng.range(2.0, 8.0);
      if (!inner.holds(c, is.radius + 10.0)) continue;
      const bool near_mesa = std::any_of(layout.mesas.begin(), layout.mesas.end(), [&](const Mesa& m) {
        return distance(m.center, c) < mesaFootprint(m) + is.radius + 8.0;
      });
      const bool near_island = std::any_of(layout.islands.begin(), layout.islands.end(), [&](const Island& o) {
        return distance({o.center.x, o.center.z}, c) < o.radius + is.radius + 10.0;
      });
      if (near_mesa || near_island) continue;
      // Fly clear of the highest ground under the island.
      const double ground_max = groundMax(ground, c, is.radius + 2.0, layout.water_level);
      is.center = {c.x, ground_max + 6.0 + is.depth + lift, c.z};
      // The island's top stays at least 8 under the rim's top, like the land.
      if (is.center.y + is.thickness + 1.0 > layout.rim_top - 8.0) continue;
      layout.islands.push_back(is);
      break;
    }
  }
}

void placeTunnels(TerrainLayout& layout, const Interior& inner, const TerrainSampler& ground, int count) {
  RandomStream rng(deriveSeed(layout.seed, kTunnelStream));
  const double floor = layout.bedrock_top + 6.0;
  for (int i = 0; i < count; ++i) {
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      Tunnel t;
      t.radius = rng.range(2.2, 3.0);
      const double clearance = t.radius + 16.0;
      const auto open = [&](Point2 at) {
        if (!inner.holds(at, clearance) || ground.waterDistance(at.x, at.z) < clearance + 8.0) return false;
        return std::none_of(layout.mesas.begin(), layout.mesas.end(),
                            [&](const Mesa& m) { return distance(m.center, at) < mesaFootprint(m) + t.radius + 4.0; });
      };
      const Point2 start = inner.draw(rng, clearance);
      double dir_x = rng.range(-1.0, 1.0), dir_z = rng.range(-1.0, 1.0);
      const double len = std::sqrt(dir_x * dir_x + dir_z * dir_z);
      if (len < 0.2 || !open(start)) continue;
      dir_x /= len;
      dir_z /= len;
      // The entrance starts just above the ground and dives steeply, then winds on downward.
      Vec3d p{start.x, ground.surfaceHeight(start.x, start.z) + 1.0, start.z};
      t.path.push_back(p);
      const Point2 middle{(inner.x0 + inner.x1) * 0.5, (inner.z0 + inner.z1) * 0.5};
      for (int step = 0; step < 18; ++step) {
        const double dy = step < 3 ? -3.5 : rng.range(-2.0, 0.3);
        dir_x += rng.range(-0.35, 0.35);
        dir_z += rng.range(-0.35, 0.35);
        // Near an obstacle (water, a mesa, the rim) turn toward the middle of the world, a few times at most.
        Vec3d next;
        bool found = false;
        for (int turn = 0; turn < 4 && !found; ++turn) {
          const double l = std::sqrt(dir_x * dir_x + dir_z * dir_z);
          if (l < 1e-6) break;
          dir_x /= l;
          dir_z /= l;
          next = {p.x + 7.0 * dir_x, p.y + dy, p.z + 7.0 * dir_z};
          found = open({next.x, next.z});
          const double to_x = middle.x - p.x, to_z = middle.z - p.z;
          const double to_l = std::max(1e-6, std::sqrt(to_x * to_x + to_z * to_z));
          dir_x += 0.7 * to_x / to_l;
          dir_z += 0.7 * to_z / to_l;
        }
        if (!found) break;
        next.y = std::max(next.y, floor + t.radius);
        // Past the entrance the tube stays under the ground, so it does not surface as a trench.
        if (step >= 2) next.y = std::min(next.y, ground.surfaceHeight(next.x, next.z) - t.radius - 2.0);
        t.path.push_back(next);
        p = next;
      }
      if (t.path.size() < 6) continue;
      layout.tunnels.push_back(std::move(t));
      break;
    }
  }
}

}  // namespace

VoxelBox worldBox(VoxelCoord size) {
  const std::int32_t x0 = -(size.x / 2), y0 = -(size.y / 2), z0 = -(size.z / 2);
  return {{x0, y0, z0}, {x0 + size.x, y0 + size.y, z0 + size.z}};
}

TerrainLayout planTerrain(std::uint64_t seed, VoxelCoord size) {
  TerrainLayout layout;
  layout.seed = seed;
  layout.box = worldBox(size);
  layout.water_level = -4.0;
  layout.rim_width = 6.0;
  layout.rim_top = double(layout.box.max.y) - 6.0;
  layout.bedrock_top = double(layout.box.min.y) + 3.0;

  const Interior inner{layout.box.min.x + layout.rim_width, layout.box.min.z + layout.rim_width,
                       layout.box.max.x - layout.rim_width, layout.box.max.z - layout.rim_width};
  // Feature counts scale with the area; the 256 x 256 default is one unit.
  const double units = double(size.x) * double(size.z) / 65536.0;
  const auto count = [&](double per_unit) { return std::max(1, int(std::floor(per_unit * units + 0.5))); };

  placeLakes(layout, inner, count(1.0), double(std::min(size.x, size.z)));
  placeRivers(layout, inner);
  // Heights and water distances depend on the water only, so one probe serves all later placements.
  const TerrainSampler ground(layout);
  placeMesas(layout, inner, ground, count(2.0));
  placeIslands(layout, inner, ground, count(3.0));
  placeTunnels(layout, inner, ground, count(2.0));
  return layout;
}

}  // namespace vtp::worldgen
