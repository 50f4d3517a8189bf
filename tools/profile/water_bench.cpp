// How the figures are taken (world units are the world's voxel size times the voxel figures below):
// - Surface cells: every water voxel of a stored chunk whose upper neighbour holds no water; the surface lies at its
//   y + occupancy / 255.
// - Bodies: 200 of each kind, each centred over a random surface cell's centre at the surface height plus a uniform
//   -0.3..0.3 voxel, in a uniformly random orientation: a sphere of radius 0.8 voxel, a box of half extents
//   (0.5, 0.4, 0.7), a capsule of radius 0.4 and half height 0.5, a cylinder of radius 0.5 and half height 0.6, and a
//   convex hull of 9 points (an uneven box with a ridge, about 1.3 x 1.3 x 0.9 voxels).
// - Time: submerged() per body, the kind's bodies in turn, batches of at least 1000 calls, median of 3, clock
//   overhead subtracted; `submerged_us_per_body` over all kinds' bodies shuffled together (a server's wet bodies).
//   The first call of each body runs before the timing (a hull's chords are then kept, as in a server's later steps).
#include "water_bench.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "report.h"
#include "timing.h"
#include "vtp/mesher/mesh_candidates.h"
#include "vtp/physics/terrain_physics.h"
#include "vtp/physics/water.h"
#include "vtp/terrain/world_file.h"

namespace vtp::tools {
namespace {

using namespace vtp::terrain;
using physics::ConvexShape;
using physics::Pose;

constexpr std::size_t kBodiesPerKind = 200;

// The hull's points (voxel units).
const std::array<std::array<float, 3>, 9> kHullPoints = {{{-0.6f, -0.5f, -0.4f},
                                                           {0.6f, -0.5f, -0.4f},
                                                           {-0.6f, 0.5f, -0.4f},
                                                           {0.6f, 0.5f, -0.4f},
                                                           {-0.6f, -0.5f, 0.4f},
                                                           {0.6f, -0.5f, 0.4f},
                                                           {-0.6f, 0.5f, 0.4f},
                                                           {0.7f, 0.6f, 0.5f},
                                                           {0.0f, 0.8f, 0.0f}}};

struct Kind {
  const char* name;
  ConvexShape shape;
};

// The five kinds at voxel size `s`; the hull's points, scaled, live in `hull`.
std::vector<Kind> kinds(double s, std::vector<std::array<float, 3>>& hull) {
  hull.clear();
  for (const auto& p : kHullPoints) hull.push_back({float(p[0] * s), float(p[1] * s), float(p[2] * s)});
  return {{"sphere", ConvexShape::sphere(0.8 * s)},
          {"box", ConvexShape::box({0.5 * s, 0.4 * s, 0.7 * s})},
          {"capsule", ConvexShape::capsule(0.4 * s, 0.5 * s)},
          {"cylinder", ConvexShape::cylinder(0.5 * s, 0.6 * s)},
          {"hull", ConvexShape::hull(hull)}};
}

// Every surface cell's centre at the surface height. [Unit: voxel]
Result<std::vector<std::array<double, 3>>> surfaceCells(const World& world) {
  std::vector<std::array<double, 3>> out;
  std::vector<Voxel> box(std::size_t(kChunkSize * (kChunkSize + 1) * kChunkSize));
  for (const ChunkCoord c : mesher::candidateChunks(world)) {
    VoxelBox b = chunkBox(c);
    b.max.y += 1;  // the row above, for the top layer's neighbours
    if (Status s = world.readBox(b, box); !s) return s.error();
    for (int z = 0; z < kChunkSize; ++z)
      for (int y = 0; y < kChunkSize; ++y)
        for (int x = 0; x < kChunkSize; ++x) {
          const Voxel v = box[std::size_t(x + kChunkSize * (y + (kChunkSize + 1) * z))];
          const Voxel above = box[std::size_t(x + kChunkSize * (y + 1 + (kChunkSize + 1) * z))];
          if (!isWater(v) || isWater(above)) continue;
          out.push_back({b.min.x + x + 0.5, b.min.y + y + v.occupancy / 255.0, b.min.z + z + 0.5});
        }
  }
  return out;
}

// A uniformly random rotation (x, y, z, w): a normalised 4D Gaussian.
std::array<double, 4> randomRotation(std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  std::array<double, 4> q{};
  double n = 0;
  while (n < 1e-6) {
    for (double& x : q) x = normal(rng);
    n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  }
  for (double& x : q) x /= n;
  return q;
}

struct Body {
  std::size_t kind;
  Pose pose;
};

}  // namespace

Result<nlohmann::json> benchWater(const std::filesystem::path& path, std::uint64_t seed) {
  Result<LoadedWorld> loaded = loadWorldFile(path);
  if (!loaded) return loaded.error();
  World& world = *loaded->world;
  auto physics = physics::TerrainPhysics::create(world);
  if (!physics) return physics.error();
  const double s = world.voxelSize();
  Result<std::vector<std::array<double, 3>>> cells = surfaceCells(world);
  if (!cells) return cells.error();
  std::vector<std::array<float, 3>> hull;
  const std::vector<Kind> all = kinds(s, hull);

  std::mt19937_64 rng(seed);
  std::vector<Body> bodies;
  if (!cells->empty()) {
    std::uniform_int_distribution<std::size_t> cell(0, cells->size() - 1);
    std::uniform_real_distribution<double> offset(-0.3, 0.3);
    for (std::size_t k = 0; k < all.size(); ++k)
      for (std::size_t i = 0; i < kBodiesPerKind; ++i) {
        const auto& c = (*cells)[cell(rng)];
        Body b{k, {}};
        b.pose.position = {c[0] * s, (c[1] + offset(rng)) * s, c[2] * s};
        b.pose.rotation = randomRotation(rng);
        bodies.push_back(b);
      }
  }
  // Every body once: the submerged fractions, and a hull's chords kept before the timing.
  std::vector<double> fraction_sum(all.size(), 0.0);
  for (const Body& b : bodies) {
    Result<physics::Submersion> r = physics::submerged(**physics, all[b.kind].shape, b.pose);
    if (!r) return r.error();
    fraction_sum[b.kind] += r->volume / r->shape_volume;
  }
  double sink = 0;
  auto timeBodies = [&](const std::vector<Body>& set) {
    return medianNsPerCall(
               [&](std::size_t n) {
                 Cycle next(set.size());
                 for (std::size_t i = 0; i < n; ++i) {
                   const Body& b = set[next.next()];
                   if (auto r = physics::submerged(**physics, all[b.kind].shape, b.pose)) sink += r->volume;
                 }
               },
               std::max<std::size_t>(1000, set.size())) /
           1000.0;
  };
  const auto orNull = [](bool have, double v) -> nlohmann::json {
    if (!have) return nullptr;
    return v;
  };
  nlohmann::json j;
  j["world"] = jsonText(path.string());
  j["surface_cells"] = cells->size();
  j["bodies"] = bodies.size();
  double fractions = 0;
  for (std::size_t k = 0; k < all.size(); ++k) {
    std::vector<Body> mine;
    std::copy_if(bodies.begin(), bodies.end(), std::back_inserter(mine), [&](const Body& b) { return b.kind == k; });
    fractions += fraction_sum[k];
    const double mean_fraction = fraction_sum[k] / double(std::max<std::size_t>(1, mine.size()));
    j["by_shape"][all[k].name] = {
        {"submerged_us_per_body", orNull(!mine.empty(), mine.empty() ? 0 : timeBodies(mine))},
        {"mean_submerged_fraction", orNull(!mine.empty(), mean_fraction)}};
  }
  std::shuffle(bodies.begin(), bodies.end(), rng);
  j["submerged_us_per_body"] = orNull(!bodies.empty(), bodies.empty() ? 0 : timeBodies(bodies));
  j["mean_submerged_fraction"] = orNull(!bodies.empty(), fractions / double(std::max<std::size_t>(1, bodies.size())));
  j["timing"] = "submerged() per body, 200 bodies of each kind floating at random surface cells in random "
                "orientations; batches of >= 1000 calls cycling over the bodies, median of 3, clock overhead "
                "subtracted; all kinds shuffled together for submerged_us_per_body";
  if (sink == 0.5) j["sink"] = sink;  // keeps the timed calls; practically never true
  return j;
}

}  // namespace vtp::tools
