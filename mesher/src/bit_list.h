#pragma once
// Set bits to a list of positions without a branch per bit: each round writes four entries unconditionally (count
// trailing zeros, look the position up, clear the lowest bit), and the word's population count says how many were
// real. A word's bits cost one predictable loop test per four instead of one hard-to-predict branch each, and the
// lists can then be walked by counted loops. Rounds of four waste less on the mesher's sparse words than rounds of
// eight, at the same speed. Private to the mesher.

#include <bit>
#include <cstdint>

namespace vtp::mesher {

// Entries per round.
inline constexpr int kBitListRound = 4;
// Entries a list needs past its last real position: a round writes up to 3 more.
inline constexpr int kBitListSlack = kBitListRound;

// Appends base + position[b] for every set bit b of `bits`, lowest first, at `out`; returns how many. `position` has
// 65 entries: entry 64 is read for the bits of a round after the word ran out (tzcnt of 0 is 64) and lands in the
// slack.
inline int appendSetBits(std::uint64_t bits, const std::int16_t* position, int base, std::uint16_t* out) {
  const int count = std::popcount(bits);
  for (; bits != 0; out += kBitListRound) {
#pragma GCC unroll 4
    for (int k = 0; k < kBitListRound; ++k) {
      out[k] = std::uint16_t(base + position[std::countr_zero(bits)]);
      bits &= bits - 1;
    }
  }
  return count;
}

// appendSetBits where a bit's position is its index: appends base + b for every set bit b.
inline int appendSetBitIndices(std::uint64_t bits, int base, std::uint16_t* out) {
  const int count = std::popcount(bits);
  for (; bits != 0; out += kBitListRound) {
#pragma GCC unroll 4
    for (int k = 0; k < kBitListRound; ++k) {
      out[k] = std::uint16_t(base + std::countr_zero(bits));
      bits &= bits - 1;
    }
  }
  return count;
}

}  // namespace vtp::mesher
