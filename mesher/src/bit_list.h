#pragma once
// Set bits to a list of positions without a branch per bit: each round writes eight entries unconditionally
// (count trailing zeros, look the position up, clear the lowest bit), and the word's population count says how many
// were real. A word with up to 8 set bits costs one predictable loop test instead of one hard-to-predict branch per
// bit, and the lists can then be walked by counted loops. Private to the mesher.

#include <bit>
#include <cstdint>

namespace vtp::mesher {

// Entries a list needs past its last real position: a round writes up to 7 more.
inline constexpr int kBitListSlack = 8;

// Appends base + position[b] for every set bit b of `bits`, lowest first, at `out`; returns how many. `position` has
// 65 entries: entry 64 is read for the bits of a round after the word ran out (tzcnt of 0 is 64) and lands in the
// slack.
inline int appendSetBits(std::uint64_t bits, const std::int16_t* position, int base, std::uint16_t* out) {
  const int count = std::popcount(bits);
  for (; bits != 0; out += 8) {
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      out[k] = std::uint16_t(base + position[std::countr_zero(bits)]);
      bits &= bits - 1;
    }
  }
  return count;
}

}  // namespace vtp::mesher
