#pragma once
// Set bits to a list of positions without a branch per bit: each round writes a fixed number of entries
// unconditionally (count trailing zeros, look the position up, clear the lowest bit), and the word's population count
// says how many were real. A word with up to a round's worth of set bits costs one predictable loop test instead of
// one hard-to-predict branch per bit, and the lists can then be walked by counted loops. Rounds of 8 suit words that
// are often full; rounds of 4 waste fewer entries on sparse words. Private to the mesher.

#include <bit>
#include <cstdint>

namespace vtp::mesher {

// Entries a list needs past its last real position: a round writes up to 7 more.
inline constexpr int kBitListSlack = 8;

// Appends base + position[b] for every set bit b of `bits`, lowest first, at `out`, in rounds of kRound (at most 8)
// entries; returns how many. `position` has 65 entries: entry 64 is read for the bits of a round after the word ran
// out (tzcnt of 0 is 64) and lands in the slack.
template <int kRound = 8>
inline int appendSetBits(std::uint64_t bits, const std::int16_t* position, int base, std::uint16_t* out) {
  static_assert(kRound >= 1 && kRound <= kBitListSlack);
  const int count = std::popcount(bits);
  for (; bits != 0; out += kRound) {
#pragma GCC unroll 8
    for (int k = 0; k < kRound; ++k) {
      out[k] = std::uint16_t(base + position[std::countr_zero(bits)]);
      bits &= bits - 1;
    }
  }
  return count;
}

}  // namespace vtp::mesher
