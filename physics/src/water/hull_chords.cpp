#include "water/hull_chords.h"

#include <LinearMath/btConvexHullComputer.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "cache/recently_used.h"

namespace vtp::physics::water {
namespace {

using V3 = std::array<double, 3>;

struct Plane {
  V3 n;
  double d;  // n . x <= d inside
};

// One hull: its key (the points and the voxel size), what the points give, and its chords per axis.
struct Entry {
  std::vector<std::array<float, 3>> points;
  double voxel_size = 0;
  bool solid = false;  // false: the points have no volume
  double volume = 0;
  V3 lo{}, hi{};
  std::vector<Plane> planes;
  std::array<std::optional<std::vector<LocalChord>>, 3> along;

  std::size_t chordBytes() const {
    std::size_t n = 0;
    for (const auto& a : along) n += a ? a->capacity() * sizeof(LocalChord) : 0;
    return n;
  }
};

// The hull, planes (Newell's normals, outward) and volume (a fan of tetrahedra per face from the centroid).
void describe(Entry& e) {
  thread_local btConvexHullComputer hull;
  hull.compute(e.points.data()->data(), int(sizeof(e.points[0])), int(e.points.size()), 0, 0);
  if (hull.faces.size() < 4) return;
  V3 lo{HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi{-HUGE_VAL, -HUGE_VAL, -HUGE_VAL}, centroid{};
  for (int i = 0; i < hull.vertices.size(); ++i) {
    for (int a = 0; a < 3; ++a) {
      const double x = hull.vertices[i][a];
      lo[std::size_t(a)] = std::min(lo[std::size_t(a)], x);
      hi[std::size_t(a)] = std::max(hi[std::size_t(a)], x);
      centroid[std::size_t(a)] += x / hull.vertices.size();
    }
  }
  double volume = 0;
  for (int f = 0; f < hull.faces.size(); ++f) {
    const btConvexHullComputer::Edge* first = &hull.edges[hull.faces[f]];
    const btConvexHullComputer::Edge* edge = first;
    V3 n{}, p0{};
    bool have_p0 = false;
    do {
      const btVector3& p = hull.vertices[edge->getSourceVertex()];
      const btVector3& q = hull.vertices[edge->getTargetVertex()];
      const V3 a{p[0] - centroid[0], p[1] - centroid[1], p[2] - centroid[2]};
      const V3 b{q[0] - centroid[0], q[1] - centroid[1], q[2] - centroid[2]};
      n[0] += (a[1] - b[1]) * (a[2] + b[2]);
      n[1] += (a[2] - b[2]) * (a[0] + b[0]);
      n[2] += (a[0] - b[0]) * (a[1] + b[1]);
      if (!have_p0) p0 = a, have_p0 = true;
      volume += std::abs(p0[0] * (a[1] * b[2] - a[2] * b[1]) + p0[1] * (a[2] * b[0] - a[0] * b[2]) +
                         p0[2] * (a[0] * b[1] - a[1] * b[0])) /
                6.0;
      edge = edge->getNextEdgeOfFace();
    } while (edge != first);
    const double len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (len == 0) continue;
    for (double& x : n) x /= len;
    double d = n[0] * p0[0] + n[1] * p0[1] + n[2] * p0[2];
    if (d < 0) n = {-n[0], -n[1], -n[2]}, d = -d;  // outward: the centroid is inside
    e.planes.push_back({n, d + n[0] * centroid[0] + n[1] * centroid[1] + n[2] * centroid[2]});
  }
  e.solid = true;
  e.volume = volume;
  e.lo = lo;
  e.hi = hi;
}

// A grid over the plane of the two other axes, chords along axis k, each cut by the planes.
std::vector<LocalChord> layChords(const Entry& e, std::size_t k) {
  const std::size_t i_axis = (k + 1) % 3, j_axis = (k + 2) % 3;
  const int ni = samplesFor(e.hi[i_axis] - e.lo[i_axis], e.voxel_size, 16);
  const int nj = samplesFor(e.hi[j_axis] - e.lo[j_axis], e.voxel_size, 16);
  const double di = (e.hi[i_axis] - e.lo[i_axis]) / ni, dj = (e.hi[j_axis] - e.lo[j_axis]) / nj;
  std::vector<LocalChord> chords;
  chords.reserve(std::size_t(ni) * std::size_t(nj));
  for (int i = 0; i < ni; ++i) {
    for (int j = 0; j < nj; ++j) {
      V3 p{};
      p[i_axis] = e.lo[i_axis] + (i + 0.5) * di;
      p[j_axis] = e.lo[j_axis] + (j + 0.5) * dj;
      double y0 = e.lo[k], y1 = e.hi[k];
      for (const Plane& plane : e.planes) {
        const double rhs = plane.d - plane.n[i_axis] * p[i_axis] - plane.n[j_axis] * p[j_axis];
        if (plane.n[k] > 1e-12) y1 = std::min(y1, rhs / plane.n[k]);
        else if (plane.n[k] < -1e-12) y0 = std::max(y0, rhs / plane.n[k]);
        else if (rhs < 0) y1 = y0;
      }
      p[k] = y0;
      if (y1 > y0) chords.push_back({p, y1 - y0, di * dj});
    }
  }
  chords.shrink_to_fit();
  return chords;
}

// A hull's key: the bytes of its points and of the voxel size, hashed 8 at a time (multiply and fold).
std::uint64_t keyOf(std::span<const std::array<float, 3>> points, double voxel_size) {
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ points.size();
  auto mix = [&h](std::uint64_t word) {
    h = (h ^ word) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  };
  const auto* bytes = reinterpret_cast<const unsigned char*>(points.data());
  std::size_t n = points.size_bytes(), i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    mix(word);
  }
  if (i < n) {
    std::uint64_t word = 0;
    std::memcpy(&word, bytes + i, n - i);
    mix(word);
  }
  std::uint64_t size_bits;
  std::memcpy(&size_bits, &voxel_size, 8);
  mix(size_bits);
  return h;
}

// The hulls this thread met last, by last use, each under its key.
struct Cache {
  RecentlyUsed<std::uint64_t, Entry, kHullCacheEntries> entries;

  // The entry of these points at this voxel size, described on a miss.
  Entry& find(std::span<const std::array<float, 3>> points, double voxel_size) {
    const auto same = [&](const Entry& e) {
      return e.voxel_size == voxel_size && e.points.size() == points.size() &&
             std::memcmp(e.points.data(), points.data(), points.size_bytes()) == 0;
    };
    const auto fill = [&](Entry& e) {
      e = Entry{};
      e.points.assign(points.begin(), points.end());
      e.voxel_size = voxel_size;
      describe(e);
    };
    return entries.get(keyOf(points, voxel_size), same, fill);
  }

  // Drops the chords of the least recently used other hulls while all chords take more than kHullCacheBytes.
  void trim(const Entry& keep) {
    for (;;) {
      std::size_t bytes = 0;
      entries.forEach([&](const Entry& e, std::uint64_t) { bytes += e.chordBytes(); });
      if (bytes <= kHullCacheBytes) return;
      Entry* oldest = nullptr;
      std::uint64_t oldest_use = 0;
      entries.forEach([&](Entry& e, std::uint64_t last_use) {
        if (&e != &keep && e.chordBytes() > 0 && (!oldest || last_use < oldest_use)) oldest = &e, oldest_use = last_use;
      });
      if (!oldest) return;
      for (auto& chords : oldest->along) chords.reset();
    }
  }
};

}  // namespace

Result<HullChords> hullChords(std::span<const std::array<float, 3>> points, std::size_t axis, double voxel_size) {
  thread_local Cache cache;
  Entry& e = cache.find(points, voxel_size);
  if (!e.solid) return Error{ErrorCode::kInvalidArgument, "submerged: convex hull has no volume", {}};
  std::optional<std::vector<LocalChord>>& chords = e.along[axis];
  if (!chords) {
    chords = layChords(e, axis);
    cache.trim(e);
  }
  return HullChords{e.volume, *chords};
}

}  // namespace vtp::physics::water
