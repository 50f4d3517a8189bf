// Scene construction and the edit schedule (scene.h). Everything here depends only on the world file and the seed
// (and, for the edits, on the driving mode's body states), so every mode and every run sees the same scene.
#include "scene.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <queue>

#include "vtp/physics/terrain_physics.h"
#include "vtp/terrain/voxel.h"
#include "vtp/terrain/world.h"
#include "vtp/terrain/world_file.h"

namespace vtp::tools::sim {
namespace {

using terrain::VoxelBox;

// Bodies stay this far inside the world's x/z bounds. [Unit: voxel]
constexpr int kSpawnMargin = 16;
// Bodies stand on a grid of cells this wide, one body per cell and layer, so no two start overlapping. [Unit: voxel]
constexpr int kCell = 3;
// One body in this many starts over the lake.
constexpr int kLakeShare = 20;
// The bridge: 1 voxel thick, 3 wide, 24 long. [Unit: voxel]
constexpr int kBridgeLength = 24, kBridgeWidth = 3;

// Water columns: per (x, z) of the bounds, whether any voxel of the column is water, and the top of the water.
struct WaterColumns {
  int x0 = 0, z0 = 0, nx = 0, nz = 0;
  std::vector<std::uint8_t> wet;
  int top = std::numeric_limits<int>::min();
  bool at(int x, int z) const {
    return x >= x0 && z >= z0 && x < x0 + nx && z < z0 + nz && wet[std::size_t((z - z0) * nx + (x - x0))] != 0;
  }
};

WaterColumns findWater(const terrain::World& world, const VoxelBox& bounds) {
  WaterColumns w;
  w.x0 = bounds.min.x;
  w.z0 = bounds.min.z;
  w.nx = bounds.max.x - bounds.min.x;
  w.nz = bounds.max.z - bounds.min.z;
  w.wet.assign(std::size_t(w.nx) * std::size_t(w.nz), 0);
  const terrain::WorldSnapshot snapshot = world.snapshot();
  for (const auto& entry : snapshot.chunks()) {
    const terrain::VoxelCoord o = terrain::chunkOrigin(entry.coord);
    if (entry.chunk->isUniform() && !terrain::isWater(entry.chunk->uniformValue())) continue;
    for (int z = 0; z < terrain::kChunkSize; ++z)
      for (int y = 0; y < terrain::kChunkSize; ++y)
        for (int x = 0; x < terrain::kChunkSize; ++x) {
          if (!terrain::isWater(entry.chunk->at(x, y, z))) continue;
          w.wet[std::size_t((o.z + z - w.z0) * w.nx + (o.x + x - w.x0))] = 1;
          w.top = std::max(w.top, o.y + y + 1);
        }
  }
  return w;
}

// Distance in columns (chessboard) from each wet column to the nearest dry one: the lake is where it is largest.
std::vector<int> dryDistance(const WaterColumns& w) {
  std::vector<int> d(w.wet.size(), -1);
  std::queue<int> frontier;
  for (std::size_t i = 0; i < w.wet.size(); ++i)
    if (w.wet[i] == 0) {
      d[i] = 0;
      frontier.push(int(i));
    }
  while (!frontier.empty()) {
    const int i = frontier.front();
    frontier.pop();
    const int x = i % w.nx, z = i / w.nx;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dx = -1; dx <= 1; ++dx) {
        const int ax = x + dx, az = z + dz;
        if (ax < 0 || az < 0 || ax >= w.nx || az >= w.nz) continue;
        const int j = az * w.nx + ax;
        if (d[std::size_t(j)] >= 0) continue;
        d[std::size_t(j)] = d[std::size_t(i)] + 1;
        frontier.push(j);
      }
  }
  return d;
}

// How many wet columns run through (x, z) along axis 0 (x) or 1 (z), and where the run starts.
std::array<int, 2> wetRun(const WaterColumns& w, int x, int z, int axis) {
  int lo = axis == 0 ? x : z, hi = lo;
  auto wet = [&](int v) { return axis == 0 ? w.at(v, z) : w.at(x, v); };
  while (wet(lo - 1)) --lo;
  while (wet(hi + 1)) ++hi;
  return {lo, hi - lo + 1};
}

void planWater(const WaterColumns& w, const VoxelBox& bounds, WaterLayout& out) {
  if (w.top == std::numeric_limits<int>::min()) return;
  out.has_water = true;
  out.water_top = w.top;
  const std::vector<int> d = dryDistance(w);
  const auto widest = std::max_element(d.begin(), d.end());
  if (*widest < 3) return;  // puddles only
  const int i = int(widest - d.begin());
  out.has_lake = true;
  out.lake_centre = {w.x0 + i % w.nx, w.z0 + i / w.nx};
  out.lake_radius = std::max(1, *widest - 2);
  // The river: wet columns well away from the lake, crossed by a short run along x or z. Candidates are ranked by
  // how close they lie to the middle of the river (the median distance from the lake), then by position.
  struct Candidate {
    double rank;
    VoxelBox box;
  };
  std::vector<Candidate> candidates;
  std::vector<double> river_distances;
  const double clear = *widest + 6.0;
  for (int z = bounds.min.z + kSpawnMargin; z < bounds.max.z - kSpawnMargin; ++z)
    for (int x = bounds.min.x + kSpawnMargin; x < bounds.max.x - kSpawnMargin; ++x) {
      if (!w.at(x, z)) continue;
      const double dist = std::hypot(double(x - out.lake_centre[0]), double(z - out.lake_centre[1]));
      if (dist < clear) continue;
      river_distances.push_back(dist);
      const std::array<int, 2> run_x = wetRun(w, x, z, 0), run_z = wetRun(w, x, z, 1);
      const int axis = run_x[1] <= run_z[1] ? 0 : 1;
      const std::array<int, 2> run = axis == 0 ? run_x : run_z;
      if (run[1] > kBridgeLength - 6) continue;
      // Only the column in the middle of its crossing proposes a bridge, centred on the crossing.
      if ((axis == 0 ? x : z) != run[0] + run[1] / 2) continue;
      const int start = run[0] + run[1] / 2 - kBridgeLength / 2;
      VoxelBox box;
      box.min.y = w.top + 1;
      box.max.y = w.top + 2;
      if (axis == 0) {
        box.min.x = start, box.max.x = start + kBridgeLength;
        box.min.z = z - kBridgeWidth / 2, box.max.z = box.min.z + kBridgeWidth;
      } else {
        box.min.z = start, box.max.z = start + kBridgeLength;
        box.min.x = x - kBridgeWidth / 2, box.max.x = box.min.x + kBridgeWidth;
      }
      if (box.min.x < bounds.min.x + 8 || box.max.x > bounds.max.x - 8 || box.min.z < bounds.min.z + 8 ||
          box.max.z > bounds.max.z - 8)
        continue;
      candidates.push_back({dist, box});
    }
  if (candidates.empty()) return;
  std::nth_element(river_distances.begin(), river_distances.begin() + std::ptrdiff_t(river_distances.size() / 2),
                   river_distances.end());
  const double middle = river_distances[river_distances.size() / 2];
  for (Candidate& c : candidates) c.rank = std::fabs(c.rank - middle);
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.rank < b.rank; });
  for (const Candidate& c : candidates) out.bridges.push_back(c.box);
}

BodySpec randomBody(std::uint64_t& rng, double voxel_size) {
  BodySpec b;
  auto range = [&](double lo, double hi) { return (lo + (hi - lo) * uniformRandom(rng)) * voxel_size; };
  b.kind = BodyKind(nextRandom(rng) % 4);
  double volume = 0;
  switch (b.kind) {
    case BodyKind::kSphere:
      b.size = {range(0.15, 0.75), 0, 0};
      volume = 4.0 / 3.0 * std::numbers::pi * b.size[0] * b.size[0] * b.size[0];
      break;
    case BodyKind::kBox:
      b.size = {range(0.15, 0.75), range(0.15, 0.75), range(0.15, 0.75)};
      volume = 8 * b.size[0] * b.size[1] * b.size[2];
      break;
    case BodyKind::kCapsule:
      b.size = {range(0.15, 0.4), range(0.1, 0.35), 0};
      volume = std::numbers::pi * b.size[0] * b.size[0] * (2 * b.size[1] + 4.0 / 3.0 * b.size[0]);
      break;
    case BodyKind::kHull: {
      const std::array<double, 3> axes = {range(0.15, 0.75), range(0.15, 0.75), range(0.15, 0.75)};
      // Twelve points on an ellipsoid, spread by the golden angle so the hull is never flat.
      for (int k = 0; k < 12; ++k) {
        const double y = 1 - (k + 0.5) / 6.0, r = std::sqrt(std::max(0.0, 1 - y * y));
        const double a = k * 2.399963229728653 + uniformRandom(rng);
        b.hull_points.push_back({axes[0] * r * std::cos(a), axes[1] * y, axes[2] * r * std::sin(a)});
      }
      volume = 0.6 * 4.0 / 3.0 * std::numbers::pi * axes[0] * axes[1] * axes[2];
      b.size = axes;
      break;
    }
  }
  b.orientation = randomUnit<4>(rng);
  // Some float (water is 1000 kg per voxel-unit cube), most sink.
  const double density = 300.0 + 1700.0 * uniformRandom(rng);
  b.mass = density * volume / (voxel_size * voxel_size * voxel_size);
  return b;
}

// Half the largest extent a body can have in any orientation. [Unit: world units]
double boundingRadius(const BodySpec& b) {
  switch (b.kind) {
    case BodyKind::kSphere: return b.size[0];
    case BodyKind::kBox: return std::hypot(b.size[0], b.size[1], b.size[2]);
    case BodyKind::kCapsule: return b.size[0] + b.size[1];
    case BodyKind::kHull: return std::max({b.size[0], b.size[1], b.size[2]});
  }
  return 1;
}

}  // namespace

std::uint64_t nextRandom(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double uniformRandom(std::uint64_t& state) { return double(nextRandom(state) >> 11) * (1.0 / 9007199254740992.0); }

Result<Scene> buildScene(const std::string& path, int body_count, std::uint64_t seed) {
  auto loaded = terrain::loadWorldFile(path);
  if (!loaded) return loaded.error();
  terrain::World& world = *loaded->world;
  Scene scene;
  scene.voxel_size = world.voxelSize();
  {
    const terrain::WorldSnapshot snapshot = world.snapshot();
    if (snapshot.chunks().empty()) return Error{ErrorCode::kInvalidArgument, path + ": the world has no voxels", {}};
    terrain::VoxelBox& b = scene.bounds;
    b.min = {std::numeric_limits<int>::max(), std::numeric_limits<int>::max(), std::numeric_limits<int>::max()};
    b.max = {std::numeric_limits<int>::min(), std::numeric_limits<int>::min(), std::numeric_limits<int>::min()};
    for (const auto& entry : snapshot.chunks()) {
      const terrain::VoxelBox c = terrain::chunkBox(entry.coord);
      b.min = {std::min(b.min.x, c.min.x), std::min(b.min.y, c.min.y), std::min(b.min.z, c.min.z)};
      b.max = {std::max(b.max.x, c.max.x), std::max(b.max.y, c.max.y), std::max(b.max.z, c.max.z)};
    }
  }
  if (auto rock = world.materials().find("rock")) scene.bridge_material = *rock;
  const WaterColumns water = findWater(world, scene.bounds);
  planWater(water, scene.bounds, scene.water);

  auto physics = physics::TerrainPhysics::create(world);
  if (!physics) return physics.error();
  // Cells of the spawn grid, shuffled; lake cells first for the lake's share of the bodies.
  const terrain::VoxelBox& b = scene.bounds;
  const int cx0 = b.min.x + kSpawnMargin, cz0 = b.min.z + kSpawnMargin;
  const int ncx = std::max(0, (b.max.x - kSpawnMargin - cx0) / kCell), ncz = std::max(0, (b.max.z - kSpawnMargin - cz0) / kCell);
  if (ncx * ncz == 0) return Error{ErrorCode::kInvalidArgument, path + ": the world is too small for bodies (16-voxel margin)", {}};
  std::uint64_t rng = seed;
  std::vector<std::array<int, 2>> cells, lake_cells;
  for (int k = 0; k < ncx * ncz; ++k) {
    const std::array<int, 2> c = {cx0 + (k % ncx) * kCell + kCell / 2, cz0 + (k / ncx) * kCell + kCell / 2};
    const bool lake = scene.water.has_lake &&
                      std::hypot(double(c[0] - scene.water.lake_centre[0]), double(c[1] - scene.water.lake_centre[1])) <
                          scene.water.lake_radius;
    (lake ? lake_cells : cells).push_back(c);
  }
  auto shuffle = [&](std::vector<std::array<int, 2>>& v) {
    for (std::size_t k = v.size(); k > 1; --k) std::swap(v[k - 1], v[std::size_t(nextRandom(rng) % k)]);
  };
  shuffle(cells);
  shuffle(lake_cells);
  const std::size_t lake_bodies = std::min(lake_cells.size(), std::size_t(body_count / kLakeShare));
  std::vector<std::array<int, 2>> order(lake_cells.begin(), lake_cells.begin() + std::ptrdiff_t(lake_bodies));
  order.insert(order.end(), cells.begin(), cells.end());
  order.insert(order.end(), lake_cells.begin() + std::ptrdiff_t(lake_bodies), lake_cells.end());

  const double s = scene.voxel_size;
  std::vector<physics::WorldRayHit> unused;
  for (int i = 0, attempt = 0; i < body_count; ++attempt) {
    if (attempt >= body_count * 4 + int(order.size()))
      return Error{ErrorCode::kInvalidArgument, path + ": found no surface under the spawn points", {}};
    const std::size_t layer = std::size_t(attempt) / order.size();
    const std::array<int, 2> cell = order[std::size_t(attempt) % order.size()];
    BodySpec body = randomBody(rng, s);
    const double x = (cell[0] + 0.5 + (uniformRandom(rng) - 0.5)) * s, z = (cell[1] + 0.5 + (uniformRandom(rng) - 0.5)) * s;
    physics::Ray down;
    down.origin = {x, (b.max.y + 1) * s, z};
    down.direction = {0, double(b.min.y - b.max.y - 2) * s, 0};
    physics::WorldRayHit hit;
    auto found = physics.value()->raycastClosest(down, hit);
    if (!found || !*found) continue;
    double ground = hit.hit.point[1];
    body.over_lake = water.at(cell[0], cell[1]);
    if (body.over_lake) ground = std::max(ground, scene.water.water_top * s);
    const double r = boundingRadius(body);
    body.position = {x, ground + r + (0.5 + 2.0 * uniformRandom(rng) + double(layer) * kCell) * s, z};
    scene.bodies.push_back(std::move(body));
    ++i;
  }
  return scene;
}

std::optional<terrain::EditCommand> pickCrater(const Scene& scene, std::span<const BodyState> bodies,
                                               std::uint64_t& random_state) {
  const double s = scene.voxel_size, m = kCraterMargin + kCraterRadius;
  const terrain::VoxelBox& b = scene.bounds;
  std::vector<std::size_t> eligible;
  std::vector<terrain::Vec3d> centres;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const BodyState& body = bodies[i];
    if (!body.finite || !body.resting) continue;
    // Under the body: the centre of the sphere is at the bottom of its box. [Unit: voxel]
    const terrain::Vec3d c{body.position[0] / s, body.aabb_min[1] / s, body.position[2] / s};
    // (Above the stored chunks there is only air: the top of the box needs no margin.)
    if (c.x < b.min.x + m || c.x > b.max.x - m || c.z < b.min.z + m || c.z > b.max.z - m || c.y < b.min.y + m) continue;
    eligible.push_back(i);
    centres.push_back(c);
  }
  if (eligible.empty()) return std::nullopt;
  const std::size_t k = std::size_t(nextRandom(random_state) % eligible.size());
  terrain::ShapeEdit edit;
  edit.shape = terrain::SphereShape{centres[k], kCraterRadius};
  edit.op = terrain::EditOp::kClear;
  return terrain::EditCommand{edit};
}

std::optional<terrain::EditCommand> pickSoakEdit(const Scene& scene, std::span<const BodyState> bodies, bool fill,
                                                 std::uint64_t& random_state) {
  if (bodies.empty()) return std::nullopt;
  const double s = scene.voxel_size;
  const terrain::VoxelBox& b = scene.bounds;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const BodyState& body = bodies[std::size_t(nextRandom(random_state) % bodies.size())];
    const double dx = uniformRandom(random_state) * 16 - 8, dz = uniformRandom(random_state) * 16 - 8;
    const double dy = uniformRandom(random_state) * 6 - 3;
    const double r = fill ? 1 + 1.5 * uniformRandom(random_state) : 1.5 + 1.5 * uniformRandom(random_state);
    if (!body.finite) continue;
    const terrain::Vec3d c{body.position[0] / s + dx, body.aabb_min[1] / s + dy, body.position[2] / s + dz};
    const double m = kCraterMargin + r;
    if (c.x < b.min.x + m || c.x > b.max.x - m || c.z < b.min.z + m || c.z > b.max.z - m || c.y < b.min.y + m) continue;
    if (fill) {
      // At least one voxel clear of every body's box. [Unit: world units]
      const double reach = (r + 1) * s;
      bool clear = true;
      for (const BodyState& other : bodies) {
        if (!other.finite) continue;
        bool apart = false;
        const double centre[3] = {c.x * s, c.y * s, c.z * s};
        for (int a = 0; a < 3; ++a)
          apart = apart || other.aabb_max[std::size_t(a)] < centre[a] - reach ||
                  other.aabb_min[std::size_t(a)] > centre[a] + reach;
        if (!apart) {
          clear = false;
          break;
        }
      }
      if (!clear) continue;
    }
    terrain::ShapeEdit edit;
    edit.shape = terrain::SphereShape{c, r};
    edit.op = fill ? terrain::EditOp::kFill : terrain::EditOp::kClear;
    edit.material = scene.bridge_material;
    return terrain::EditCommand{edit};
  }
  return std::nullopt;
}

std::optional<terrain::EditCommand> pickBridge(const Scene& scene, std::span<const BodyState> bodies) {
  const double s = scene.voxel_size;
  for (const terrain::VoxelBox& box : scene.water.bridges) {
    bool clear = true;
    for (const BodyState& body : bodies) {
      bool apart = false;
      const std::array<int, 3> lo = {box.min.x, box.min.y, box.min.z}, hi = {box.max.x, box.max.y, box.max.z};
      for (int a = 0; a < 3; ++a)
        apart = apart || body.aabb_max[std::size_t(a)] < (lo[std::size_t(a)] - 0.5) * s ||
                body.aabb_min[std::size_t(a)] > (hi[std::size_t(a)] + 0.5) * s;
      // A body that is not finite is nowhere; it cannot block the bridge.
      if (!apart && body.finite) {
        clear = false;
        break;
      }
    }
    if (!clear) continue;
    terrain::ShapeEdit edit;
    edit.shape = terrain::BoxShape{{double(box.min.x), double(box.min.y), double(box.min.z)},
                                   {double(box.max.x), double(box.max.y), double(box.max.z)}};
    edit.op = terrain::EditOp::kFill;
    edit.material = scene.bridge_material;
    return terrain::EditCommand{edit};
  }
  return std::nullopt;
}

}  // namespace vtp::tools::sim
