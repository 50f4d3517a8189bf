#pragma once
/// \file
/// Deterministic noise for the world generator: integer hashing for lattices and random streams, and gradient
/// noise (Perlin, "Improving Noise", SIGGRAPH 2002) on an integer-hashed lattice instead of a permutation table.
///
/// Determinism: the results depend only on the arguments. The code uses integer arithmetic and IEEE-754 double
/// `+ - * /` and `floor` only (no libm transcendental functions, no std:: random distributions, whose results are
/// implementation-defined), and the project builds with -ffp-contract=off, so Release and sanitizer builds produce
/// bit-identical values.

#include <array>
#include <cstdint>

namespace vtp::worldgen {

/// The splitmix64 finaliser (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", 2014): a
/// bijective 64-bit mix whose output bits each depend on every input bit.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Hash of an integer lattice point under a seed (any int32 coordinates; wraps, never overflows).
constexpr std::uint64_t hashLattice(std::uint64_t seed, std::int64_t x, std::int64_t y, std::int64_t z) {
  return mix64(seed ^ (std::uint64_t(x) * 0x9e3779b97f4a7c15ull) ^ (std::uint64_t(y) * 0xc2b2ae3d27d4eb4full) ^
               (std::uint64_t(z) * 0x165667b19e3779f9ull));
}

/// Derives an independent seed for sub-stream `stream` of `seed` (one per noise field or feature kind).
constexpr std::uint64_t deriveSeed(std::uint64_t seed, std::uint64_t stream) {
  return mix64(seed ^ mix64(stream + 0x51afd7ed558ccd1dull));
}

/// A deterministic stream of random numbers (splitmix64). Value type; not synchronised.
class RandomStream {
 public:
  /// Starts the stream of `seed`; equal seeds give equal streams.
  explicit RandomStream(std::uint64_t seed) : m_state(seed) {}
  /// Next 64 random bits.
  std::uint64_t next() {
    m_state += 0x9e3779b97f4a7c15ull;
    return mix64(m_state);
  }
  /// Uniform in [0, 1), a multiple of 2^-53 (exact in double).
  double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }
  /// Uniform in [lo, hi).
  double range(double lo, double hi) { return lo + (hi - lo) * uniform(); }

 private:
  std::uint64_t m_state;
};

/// 2D gradient noise at (x, y), scaled to about [-1, 1]; 0 at every integer lattice point. Lattice gradients are
/// eight unit directions picked by hashLattice(seed, ...). Continuous with a continuous gradient (quintic fade).
double gradientNoise2(std::uint64_t seed, double x, double y);

/// 3D gradient noise at (x, y, z), about [-1, 1]; the twelve cube-edge gradients of "Improving Noise".
double gradientNoise3(std::uint64_t seed, double x, double y, double z);

/// Fractal sum (fBm) of gradient noise: `octaves` layers, each at twice the frequency and half the amplitude of the
/// previous, normalised by the sum of amplitudes so the result stays in about [-1, 1]. Value type, immutable;
/// any number of threads may sample one.
class FractalNoise {
 public:
  /// `frequency`: lattice cells per voxel of the first octave (> 0); `octaves` is clamped to 1..kMaxOctaves.
  FractalNoise(std::uint64_t seed, double frequency, int octaves);
  /// Sample at a point in voxel units (2D: the horizontal plane).
  double at(double x, double z) const;
  /// Sample at a point in voxel units.
  double at(double x, double y, double z) const;

  /// Most octaves a FractalNoise takes.
  static constexpr int kMaxOctaves = 8;

 private:
  std::array<std::uint64_t, kMaxOctaves> m_octave_seeds{};  // one lattice per octave
  double m_frequency;
  int m_octaves;
  double m_norm;  // 1 / sum of octave amplitudes
};

}  // namespace vtp::worldgen
