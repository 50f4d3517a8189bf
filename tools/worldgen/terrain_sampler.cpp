// The density field and column walk of terrain_sampler.h. Smooth unions use Inigo Quilez's polynomial smooth min
// ("smooth minimum", iquilezles.org/articles/smin), which equals the plain min once its operands differ by k; the
// culling below relies on that: a feature left out of a rect changes no voxel's value.
#include "terrain_sampler.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "materials.h"
#include "vtp/terrain/assert.h"

namespace vtp::worldgen {

using terrain::Vec3d;
using terrain::Voxel;

namespace {

// Vertical shape of water bodies: banks reach water level + kBank at a body's radius and rise kBankSlope per voxel
// beyond it, so a valley opens round every lake and river.
constexpr double kBank = 2.5;
constexpr double kBankSlope = 0.5;
// Width of the smooth joins between hills, valleys and the hills' floor. [Unit: voxel]
constexpr double kBlend = 2.0;
// Rolling hills: kHillBase + kHillAmplitude * s(kHillContrast * noise) with s(v) = v / sqrt(1 + v^2) in (-1, 1):
// fBm sits mostly near 0, the contrast spreads it, s keeps the hills below kMaxHillHeight.
constexpr double kHillBase = 3.0;
constexpr double kHillAmplitude = 15.0;
constexpr double kHillContrast = 3.0;
static_assert(kHillBase + kHillAmplitude + kBlend / 4 < kMaxHillHeight);
// Water distance is capped here before it feeds the carving limits, so culled and unculled sums agree.
constexpr double kFarFromWater = 30.0;
// Mesa outline wobble, how far the cliff leans out per voxel of height in the flare band, top bumpiness.
constexpr double kMesaWobble = 2.5;
constexpr double kFlareSlope = 0.9;
constexpr double kMesaTopWobble = 0.6;
// Island outline wobble and rim face wobble. [Unit: voxel]
constexpr double kIslandWobble = 1.5;
constexpr double kRimWobble = 1.5;
// Cave chambers: noise above kCaveThreshold is hollow; kCaveScale turns noise units into voxels (about 1 / the
// noise gradient); kCaveSquash flattens chambers; they stay kCaveRoof under the ground.
constexpr double kCaveThreshold = 0.27;
constexpr double kCaveScale = 14.0;
constexpr double kCaveSquash = 1.6;
constexpr double kCaveRoof = 5.0;
// Caves and tunnels keep this far from water channels, the rim face and bedrock, so no water voxel ever touches a
// hollow and the tub stays closed. [Unit: voxel]
constexpr double kCarveWaterMargin = 10.0;
constexpr double kCarveRimMargin = 4.0;
constexpr double kCarveFloor = 3.0;
// Ore veins: thin sheets where single-octave noise is near zero, in regions where a smoother mask is high.
constexpr double kVeinWidth = 0.06;
constexpr double kVeinMask = 0.22;
// Sand on beds and shores: ground below water level + kSandHeight within kSandReach of a channel.
constexpr double kSandHeight = 2.0;
constexpr double kSandReach = 8.0;
// Slopes steeper than this (the factor 1/sqrt(1 + |grad h|^2), i.e. about 57 degrees) show bare rock.
constexpr double kSteepSlope = 0.55;
// Grass covers the top voxels down to the first solid-inside one; dirt or sand lies kSubsoilDepth voxels under it.
constexpr int kSubsoilDepth = 3;

// Smooth 3D fields (caves, the vein mask) are sampled every kLerpStep voxels in y, at heights that are multiples of
// it, and interpolated linearly in between: a quarter of the noise cost, and independent of how columns are cut.
constexpr double kLerpStep = 4.0;

// One column's samples of a field, walked in any order (the column walk goes down, so the lower sample of one
// interval is reused as the upper of the next).
class VerticalSamples {
 public:
  template <class Sample>
  double at(double y, const Sample& sample) {
    const double k = std::floor(y * (1.0 / kLerpStep));
    if (!m_valid || k != m_k) {
      m_upper = (m_valid && k == m_k - 1.0) ? m_lower : sample((k + 1.0) * kLerpStep);
      m_lower = sample(k * kLerpStep);
      m_k = k;
      m_valid = true;
    }
    const double t = (y - k * kLerpStep) * (1.0 / kLerpStep);
    return m_lower + t * (m_upper - m_lower);
  }

 private:
  bool m_valid = false;
  double m_k = 0, m_lower = 0, m_upper = 0;
};

double smoothMin(double a, double b, double k) {
  const double h = std::max(k - std::abs(a - b), 0.0) / k;
  return std::min(a, b) - h * h * k * 0.25;
}

double smoothMax(double a, double b, double k) { return -smoothMin(-a, -b, k); }

double smoothStep(double t) {
  t = std::clamp(t, 0.0, 1.0);
  return t * t * (3.0 - 2.0 * t);
}

// Edit coverage's rule (edit.h) applied to the density at the voxel centre.
std::uint8_t occupancyOf(double d) {
  if (d >= 0.5) return 255;
  if (d <= -0.5) return 0;
  return std::uint8_t(std::floor(255.0 * (0.5 + d) + 0.5));
}

double lengthXz(double x, double z) { return std::sqrt(x * x + z * z); }

// Squared horizontal distance from (x, z) to segment a-b.
double segmentDistance2(Point2 a, Point2 b, double x, double z) {
  const double ex = b.x - a.x, ez = b.z - a.z;
  const double len2 = ex * ex + ez * ez;
  const double t = len2 > 0 ? std::clamp(((x - a.x) * ex + (z - a.z) * ez) / len2, 0.0, 1.0) : 0.0;
  const double dx = x - (a.x + t * ex), dz = z - (a.z + t * ez);
  return dx * dx + dz * dz;
}

// Squared distance from p to segment a-b in 3D.
double segmentDistance2(const Vec3d& a, const Vec3d& b, const Vec3d& p) {
  const double ex = b.x - a.x, ey = b.y - a.y, ez = b.z - a.z;
  const double len2 = ex * ex + ey * ey + ez * ez;
  const double t =
      len2 > 0 ? std::clamp(((p.x - a.x) * ex + (p.y - a.y) * ey + (p.z - a.z) * ez) / len2, 0.0, 1.0) : 0.0;
  const double dx = p.x - (a.x + t * ex), dy = p.y - (a.y + t * ey), dz = p.z - (a.z + t * ez);
  return dx * dx + dy * dy + dz * dz;
}

// How far a water body's outline wobbles: narrow rivers less, so they never pinch shut.
double shoreWobble(const WaterBody& body) { return std::min(3.0, 0.2 * body.radius); }

// True when the box [x0 - r, x1 + r] x [z0 - r, z1 + r] meets the span of every point a rect samples: its columns
// and, for the slope, one column more on each side.
bool reaches(double x0, double z0, double x1, double z1, double r, const ColumnRect& rect) {
  return x1 + r >= rect.x0 - 1.0 && x0 - r <= rect.x1 + 1.0 && z1 + r >= rect.z0 - 1.0 && z0 - r <= rect.z1 + 1.0;
}

}  // namespace

// Features that can change some voxel of a rect; everything else is provably too far (see the reach margins).
struct TerrainSampler::Candidates {
  struct Body {
    std::size_t index = 0;
    std::vector<std::size_t> segments;  // segment i joins path[i] and path[i + 1]; unused for one-point bodies
  };
  struct TunnelSegment {
    Vec3d a, b;
    double radius = 0;
  };
  std::vector<Body> water;
  std::vector<std::size_t> mesas, islands;
  std::vector<TunnelSegment> tunnel_segments;
};

// The column's slice of each nearby feature, rebuilt per column in buffers reused across the rect.
struct TerrainSampler::ColumnScratch {
  struct MesaSlice {
    double side;         // horizontal signed distance into the vertical cliff
    double top;          // top height here
    double flare_start;  // the cliff leans out above this height
  };
  struct IslandSlice {
    double side;      // horizontal signed distance into the disc
    double center_y;  // underside of the disc
    double thickness;
    double radius;  // the disc's radius here; the cone under it shrinks to 0 at depth
    double depth;
  };
  std::vector<MesaSlice> mesas;
  std::vector<IslandSlice> islands;
  std::vector<const Candidates::TunnelSegment*> tunnels;
};

// Per-column values shared by all voxels of the column.
struct TerrainSampler::ColumnInfo {
  double surface = 0;         // carved ground height
  double slope = 1;           // 1 / sqrt(1 + |grad surface|^2): turns height differences into distances
  double water_distance = 0;  // to the nearest channel edge, capped at kFarFromWater
  double edge_distance = 0;   // to the box's side faces
};

TerrainSampler::TerrainSampler(TerrainLayout layout)
    : m_layout(std::move(layout)),
      m_hills(deriveSeed(m_layout.seed, 101), 1.0 / 96.0, 4),
      m_shore(deriveSeed(m_layout.seed, 102), 1.0 / 24.0, 2),
      m_outline(deriveSeed(m_layout.seed, 103), 1.0 / 12.0, 2),
      m_rim(deriveSeed(m_layout.seed, 104), 1.0 / 10.0, 2),
      m_caves(deriveSeed(m_layout.seed, 105), 1.0 / 36.0, 2),
      m_vein_mask(deriveSeed(m_layout.seed, 106), 1.0 / 32.0, 1),
      m_vein_seed(deriveSeed(m_layout.seed, 107)),
      m_vein_kind(deriveSeed(m_layout.seed, 108), 1.0 / 64.0, 1) {}

double TerrainSampler::hillsAt(double x, double z) const {
  // The floor keeps open ground above the water level, so water only ever sits in carved channels.
  const double v = kHillContrast * m_hills.at(x, z);
  return smoothMax(kHillBase + kHillAmplitude * v / std::sqrt(1.0 + v * v), m_layout.water_level + kBank, kBlend);
}

double TerrainSampler::waterReach(const WaterBody& body) const {
  // Beyond this horizontal distance from the path the bank profile exceeds every hill by kBlend: no effect.
  const double rise = (kMaxHillHeight + kBlend - (m_layout.water_level + kBank)) / kBankSlope;
  return body.radius + shoreWobble(body) + std::max(rise, kFarFromWater);
}

double TerrainSampler::carvedHeight(double x, double z, double hills, const Candidates* candidates) const {
  double h = hills;
  const double shore = m_shore.at(x, z);
  const auto carve = [&](const WaterBody& body, double distance2) {
    const double d = std::sqrt(distance2) - shoreWobble(body) * shore;
    const double t = d / body.radius;
    // Flat bed over the inner 30 %, a smooth rise to the bank at the radius, then a straight slope outward.
    const double profile = t < 1.0
                               ? m_layout.water_level - body.depth + (body.depth + kBank) * smoothStep((t - 0.3) / 0.7)
                               : m_layout.water_level + kBank + (d - body.radius) * kBankSlope;
    h = smoothMin(h, profile, kBlend);
  };
  if (candidates) {
    for (const auto& c : candidates->water) carve(m_layout.water[c.index], pathDistance2(c.index, x, z, &c.segments));
  } else {
    for (std::size_t i = 0; i < m_layout.water.size(); ++i) carve(m_layout.water[i], pathDistance2(i, x, z, nullptr));
  }
  return h;
}

double TerrainSampler::pathDistance2(std::size_t body_index, double x, double z,
                                     const std::vector<std::size_t>* segments) const {
  const auto& path = m_layout.water[body_index].path;
  if (path.size() == 1) return (x - path[0].x) * (x - path[0].x) + (z - path[0].z) * (z - path[0].z);
  double best = 1e300;
  if (segments) {
    for (std::size_t s : *segments) best = std::min(best, segmentDistance2(path[s], path[s + 1], x, z));
  } else {
    for (std::size_t s = 0; s + 1 < path.size(); ++s)
      best = std::min(best, segmentDistance2(path[s], path[s + 1], x, z));
  }
  return best;
}

double TerrainSampler::surfaceHeight(double x, double z) const { return carvedHeight(x, z, hillsAt(x, z), nullptr); }

double TerrainSampler::waterDistance(double x, double z) const {
  double best = 1e300;
  for (std::size_t i = 0; i < m_layout.water.size(); ++i) {
    best = std::min(best, std::sqrt(pathDistance2(i, x, z, nullptr)) - m_layout.water[i].radius);
  }
  return best;
}

TerrainSampler::Candidates TerrainSampler::gather(ColumnRect rect) const {
  Candidates c;
  for (std::size_t i = 0; i < m_layout.water.size(); ++i) {
    const WaterBody& body = m_layout.water[i];
    const double reach = waterReach(body);
    Candidates::Body entry{i, {}};
    if (body.path.size() == 1) {
      if (!reaches(body.path[0].x, body.path[0].z, body.path[0].x, body.path[0].z, reach, rect)) continue;
    } else {
      for (std::size_t s = 0; s + 1 < body.path.size(); ++s) {
        const Point2 a = body.path[s], b = body.path[s + 1];
        if (reaches(std::min(a.x, b.x), std::min(a.z, b.z), std::max(a.x, b.x), std::max(a.z, b.z), reach, rect)) {
          entry.segments.push_back(s);
        }
      }
      if (entry.segments.empty()) continue;
    }
    c.water.push_back(std::move(entry));
  }
  for (std::size_t i = 0; i < m_layout.mesas.size(); ++i) {
    const Mesa& m = m_layout.mesas[i];
    const double r = m.radius + kMesaWobble + m.flare_height * kFlareSlope + 1.0;
    if (reaches(m.center.x, m.center.z, m.center.x, m.center.z, r, rect)) c.mesas.push_back(i);
  }
  for (std::size_t i = 0; i < m_layout.islands.size(); ++i) {
    const Island& is = m_layout.islands[i];
    if (reaches(is.center.x, is.center.z, is.center.x, is.center.z, is.radius + kIslandWobble + 1.0, rect)) {
      c.islands.push_back(i);
    }
  }
  for (const Tunnel& t : m_layout.tunnels) {
    for (std::size_t s = 0; s + 1 < t.path.size(); ++s) {
      const Vec3d a = t.path[s], b = t.path[s + 1];
      if (reaches(std::min(a.x, b.x), std::min(a.z, b.z), std::max(a.x, b.x), std::max(a.z, b.z), t.radius + 1.0,
                  rect)) {
        c.tunnel_segments.push_back({a, b, t.radius});
      }
    }
  }
  return c;
}

void TerrainSampler::fillColumns(ColumnRect rect, std::span<Voxel> out) const {
  const terrain::VoxelBox& box = m_layout.box;
  VTP_ASSERT(rect.x0 < rect.x1 && rect.z0 < rect.z1, "the sampled rectangle is not empty");
  VTP_ASSERT(rect.x0 >= box.min.x && rect.x1 <= box.max.x && rect.z0 >= box.min.z && rect.z1 <= box.max.z,
             "the rectangle lies inside the world box");
  const std::size_t width = std::size_t(rect.x1 - rect.x0), depth = std::size_t(rect.z1 - rect.z0);
  const std::size_t height = std::size_t(box.max.y - box.min.y);
  VTP_ASSERT(out.size() == width * height * depth, "the output holds the rectangle's voxels");
  const Candidates candidates = gather(rect);
  ColumnScratch scratch;

  // Ground heights on a grid one column wider on every side: the slope at a column needs its neighbours.
  const std::size_t grid_w = width + 2, grid_d = depth + 2;
  std::vector<double> heights(grid_w * grid_d);
  for (std::size_t j = 0; j < grid_d; ++j) {
    for (std::size_t i = 0; i < grid_w; ++i) {
      const double px = double(rect.x0) - 1.0 + double(i) + 0.5, pz = double(rect.z0) - 1.0 + double(j) + 0.5;
      heights[j * grid_w + i] = carvedHeight(px, pz, hillsAt(px, pz), &candidates);
    }
  }

  for (std::size_t j = 0; j < depth; ++j) {
    for (std::size_t i = 0; i < width; ++i) {
      const std::int32_t x = rect.x0 + std::int32_t(i), z = rect.z0 + std::int32_t(j);
      const double px = x + 0.5, pz = z + 0.5;
      const std::size_t g = (j + 1) * grid_w + (i + 1);
      ColumnInfo info;
      info.surface = heights[g];
      const double gx = (heights[g + 1] - heights[g - 1]) * 0.5, gz = (heights[g + grid_w] - heights[g - grid_w]) * 0.5;
      info.slope = 1.0 / std::sqrt(1.0 + gx * gx + gz * gz);
      double wd = kFarFromWater;
      for (const auto& c : candidates.water) {
        wd = std::min(wd, std::sqrt(pathDistance2(c.index, px, pz, &c.segments)) - m_layout.water[c.index].radius);
      }
      info.water_distance = wd;
      info.edge_distance = std::min(std::min(px - box.min.x, box.max.x - px), std::min(pz - box.min.z, box.max.z - pz));
      fillColumn(x, z, info, candidates, scratch, out.subspan(i + width * height * j), width);
    }
  }
}

void TerrainSampler::fillColumn(std::int32_t x, std::int32_t z, const ColumnInfo& c, const Candidates& candidates,
                                ColumnScratch& scratch, std::span<Voxel> column, std::size_t stride) const {
  const TerrainLayout& plan = m_layout;
  const double px = x + 0.5, pz = z + 0.5;
  const double water_level = plan.water_level;

  scratch.mesas.clear();
  scratch.islands.clear();
  scratch.tunnels.clear();
  double top = std::max(c.surface + 0.5 / c.slope + 1.0, water_level);
  const double outline = m_outline.at(px, pz);
  for (std::size_t index : candidates.mesas) {
    const Mesa& m = plan.mesas[index];
    const double side = m.radius + kMesaWobble * outline - lengthXz(px - m.center.x, pz - m.center.z);
    if (side + m.flare_height * kFlareSlope <= -0.5) continue;  // stays <= -0.5 here: changes no voxel
    const double mesa_top = m.top + kMesaTopWobble * outline;
    scratch.mesas.push_back({side, mesa_top, m.top - m.flare_height});
    top = std::max(top, mesa_top + 1.0);
  }
  for (std::size_t index : candidates.islands) {
    const Island& is = plan.islands[index];
    const double r = lengthXz(px - is.center.x, pz - is.center.z);
    const double radius = is.radius + kIslandWobble * outline;
    if (radius - r <= -0.5) continue;
    scratch.islands.push_back({radius - r, is.center.y, is.thickness, radius, is.depth});
    top = std::max(top, is.center.y + is.thickness + 1.0);
  }
  // The rim: a wall of width rim_width (wobbling) along the box's sides, up to rim_top (wobbling).
  const double rim_noise = m_rim.at(px, pz);
  const double rim_side = plan.rim_width + kRimWobble * rim_noise - c.edge_distance;
  const double rim_top = plan.rim_top + kRimWobble * 0.5 * rim_noise;
  if (rim_side > -0.5) top = std::max(top, rim_top + 1.0);
  // Tunnels that pass within reach of the column.
  for (const auto& t : candidates.tunnel_segments) {
    const Point2 a{t.a.x, t.a.z}, b{t.b.x, t.b.z};
    const double reach = t.radius + 0.5;
    if (segmentDistance2(a, b, px, pz) < reach * reach) scratch.tunnels.push_back(&t);
  }
  // Hollows stay clear of water, the rim face and bedrock.
  const double carve_limit =
      std::min(c.water_distance - kCarveWaterMargin, c.edge_distance - plan.rim_width - kRimWobble - kCarveRimMargin);
  const bool sandy_ground = c.water_distance < kSandReach;
  const double vein_shift = 5.0 * m_vein_kind.at(px, pz);

  const std::int32_t y0 = plan.box.min.y, y1 = plan.box.max.y;
  const std::int32_t y_top = std::clamp(std::int32_t(std::floor(top)) + 1, y0, y1);
  for (std::int32_t y = y1 - 1; y >= y_top; --y) column[std::size_t(y - y0) * stride] = terrain::kAir;

  // Walking down: the kind of air above a solid run decides its layers (open sky: grass/dirt or sand; a cave: rock).
  VerticalSamples caves, vein_mask;
  const auto cave_at = [&](double y) { return m_caves.at(px, y * kCaveSquash, pz); };
  const auto vein_mask_at = [&](double y) { return m_vein_mask.at(px, y, pz); };
  bool open_above = true, in_run = false, run_open = true, inside_seen = false, run_sandy = false, run_steep = false;
  int subsoil = 0;
  for (std::int32_t y = y_top - 1; y >= y0; --y) {
    const double py = y + 0.5;
    double d = (c.surface - py) * c.slope;
    for (const auto& m : scratch.mesas) {
      d = std::max(d, std::min(m.side + std::max(0.0, py - m.flare_start) * kFlareSlope, m.top - py));
    }
    const double uncarved = d;
    const double carve_here = std::min(carve_limit, py - (plan.bedrock_top + kCarveFloor));
    if (carve_here > -0.5 && d > -0.5) {
      const double cave_limit = std::min(carve_here, c.surface - kCaveRoof - py);
      if (cave_limit > -0.5) {
        const double cave = (caves.at(py, cave_at) - kCaveThreshold) * kCaveScale;
        d = std::min(d, -std::min(cave, cave_limit));
      }
      for (const auto* t : scratch.tunnels) {
        const double tube = t->radius - std::sqrt(segmentDistance2(t->a, t->b, Vec3d{px, py, pz}));
        d = std::min(d, -std::min(tube, carve_here));
      }
    }
    for (const auto& is : scratch.islands) {
      const double dy = py - is.center_y;
      // Above the underside: the disc's vertical edge. Below: a cone whose radius shrinks to 0 at depth; the
      // horizontal gap times depth / slant length is the distance to its slanted side.
      const double side = dy >= 0 ? is.side
                                  : (is.side + is.radius * dy / is.depth) * is.depth /
                                        std::sqrt(is.depth * is.depth + is.radius * is.radius);
      d = std::max(d, std::min(side, is.thickness - dy));
    }
    d = std::max(d, std::min(rim_side, rim_top - py));
    d = std::max(d, plan.bedrock_top - py);

    Voxel& out = column[std::size_t(y - y0) * stride];
    const std::uint8_t occupancy = occupancyOf(d);
    if (occupancy == 0) {
      const bool carved = occupancyOf(uncarved) > 0;
      // Water rests in channels carved below the water level; hollows never reach them (kCarveWaterMargin).
      out = (!carved && py < water_level && c.surface < water_level) ? Voxel{terrain::kWaterMaterial, 255}
                                                                     : terrain::kAir;
      open_above = !carved;
      in_run = false;
      continue;
    }
    if (!in_run) {
      in_run = true;
      run_open = open_above;
      inside_seen = false;
      subsoil = 0;
      run_sandy = sandy_ground && py < water_level + kSandHeight;
      run_steep = c.slope < kSteepSlope && std::abs(py - c.surface) < 2.5;
    }
    std::uint8_t material = kRock;
    if (run_open && !run_steep) {
      if (!inside_seen) {
        material = run_sandy ? kSand : kGrass;
      } else if (subsoil < kSubsoilDepth) {
        material = run_sandy ? kSand : kDirt;
        ++subsoil;
      }
    }
    if (occupancy >= terrain::kSolidInsideOccupancy) inside_seen = true;
    // Veins: thin sheets of ore in rock, their kind set by depth (coal high, iron in the middle, ore deep).
    if (material == kRock && vein_mask.at(py, vein_mask_at) > kVeinMask &&
        std::abs(gradientNoise3(m_vein_seed, px / 13.0, py / 9.0, pz / 13.0)) < kVeinWidth) {
      const double level = py + vein_shift;
      material = level > -14.0 ? kCoal : (level > -30.0 ? kIron : kOre);
    }
    out = Voxel{material, occupancy};
  }
}

}  // namespace vtp::worldgen
