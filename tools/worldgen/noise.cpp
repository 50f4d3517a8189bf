// Gradient noise after Ken Perlin, "Improving Noise", SIGGRAPH 2002: quintic fade, fixed gradient sets. The
// permutation table is replaced by hashLattice so the lattice has no period and every seed is its own field.
#include "noise.h"

#include <cmath>

namespace vtp::worldgen {
namespace {

// 6t^5 - 15t^4 + 10t^3: zero first and second derivatives at 0 and 1, so octaves join without creases.
double fade(double t) { return t * t * t * (t * (t * 6.0 - 15.0) + 10.0); }

double lerp(double a, double b, double t) { return a + t * (b - a); }

// Eight unit directions; the diagonal component is 1/sqrt(2) written out so no libm call is involved.
constexpr double kDiag = 0.70710678118654752440;
constexpr double kGrad2[8][2] = {{1, 0},         {-1, 0},         {0, 1},          {0, -1},
                                 {kDiag, kDiag}, {-kDiag, kDiag}, {kDiag, -kDiag}, {-kDiag, -kDiag}};

double corner2(std::uint64_t seed, std::int64_t ix, std::int64_t iy, double dx, double dy) {
  const double* g = kGrad2[hashLattice(seed, ix, iy, 0) >> 61];
  return g[0] * dx + g[1] * dy;
}

// Perlin's twelve cube-edge gradients (16 entries, four repeated), selected by the top four hash bits.
double corner3(std::uint64_t seed, std::int64_t ix, std::int64_t iy, std::int64_t iz, double dx, double dy, double dz) {
  const unsigned h = unsigned(hashLattice(seed, ix, iy, iz) >> 60);
  const double u = h < 8 ? dx : dy;
  const double v = h < 4 ? dy : (h == 12 || h == 14 ? dx : dz);
  return ((h & 1) ? -u : u) + ((h & 2) ? -v : v);
}

}  // namespace

double gradientNoise2(std::uint64_t seed, double x, double y) {
  const double fx = std::floor(x), fy = std::floor(y);
  const auto ix = std::int64_t(fx), iy = std::int64_t(fy);
  const double dx = x - fx, dy = y - fy;
  const double n00 = corner2(seed, ix, iy, dx, dy);
  const double n10 = corner2(seed, ix + 1, iy, dx - 1.0, dy);
  const double n01 = corner2(seed, ix, iy + 1, dx, dy - 1.0);
  const double n11 = corner2(seed, ix + 1, iy + 1, dx - 1.0, dy - 1.0);
  const double u = fade(dx), v = fade(dy);
  // Unit gradients reach at most 1/sqrt(2) in 2D; scale that to 1.
  return lerp(lerp(n00, n10, u), lerp(n01, n11, u), v) * 1.41421356237309504880;
}

double gradientNoise3(std::uint64_t seed, double x, double y, double z) {
  const double fx = std::floor(x), fy = std::floor(y), fz = std::floor(z);
  const auto ix = std::int64_t(fx), iy = std::int64_t(fy), iz = std::int64_t(fz);
  const double dx = x - fx, dy = y - fy, dz = z - fz;
  const double u = fade(dx), v = fade(dy), w = fade(dz);
  const double x00 = lerp(corner3(seed, ix, iy, iz, dx, dy, dz), corner3(seed, ix + 1, iy, iz, dx - 1, dy, dz), u);
  const double x10 =
      lerp(corner3(seed, ix, iy + 1, iz, dx, dy - 1, dz), corner3(seed, ix + 1, iy + 1, iz, dx - 1, dy - 1, dz), u);
  const double x01 =
      lerp(corner3(seed, ix, iy, iz + 1, dx, dy, dz - 1), corner3(seed, ix + 1, iy, iz + 1, dx - 1, dy, dz - 1), u);
  const double x11 = lerp(corner3(seed, ix, iy + 1, iz + 1, dx, dy - 1, dz - 1),
                          corner3(seed, ix + 1, iy + 1, iz + 1, dx - 1, dy - 1, dz - 1), u);
  return lerp(lerp(x00, x10, v), lerp(x01, x11, v), w);
}

FractalNoise::FractalNoise(std::uint64_t seed, double frequency, int octaves)
    : m_frequency(frequency), m_octaves(octaves < 1 ? 1 : (octaves > kMaxOctaves ? kMaxOctaves : octaves)) {
  // Each octave has its own lattice, so octaves do not share zeros at the integer points.
  for (int i = 0; i < m_octaves; ++i) m_octave_seeds[std::size_t(i)] = deriveSeed(seed, std::uint64_t(i));
  double sum = 0.0, amplitude = 1.0;
  for (int i = 0; i < m_octaves; ++i, amplitude *= 0.5) sum += amplitude;
  m_norm = 1.0 / sum;
}

double FractalNoise::at(double x, double z) const {
  double sum = 0.0, amplitude = 1.0, f = m_frequency;
  for (int i = 0; i < m_octaves; ++i, amplitude *= 0.5, f *= 2.0) {
    sum += amplitude * gradientNoise2(m_octave_seeds[std::size_t(i)], x * f, z * f);
  }
  return sum * m_norm;
}

double FractalNoise::at(double x, double y, double z) const {
  double sum = 0.0, amplitude = 1.0, f = m_frequency;
  for (int i = 0; i < m_octaves; ++i, amplitude *= 0.5, f *= 2.0) {
    sum += amplitude * gradientNoise3(m_octave_seeds[std::size_t(i)], x * f, y * f, z * f);
  }
  return sum * m_norm;
}

}  // namespace vtp::worldgen
