// Chunk masks from a 10^3 box with bit operations only:
//   1. classify: AVX2 turns every 32 voxels into 32 solid-inside bits and 32 water bits (two 1000-bit strings);
//   2. X: each 4-row window of 40 bits (5 bytes, so windows start on byte boundaries) is ORed with itself shifted by
//      one and two bits; the 8 bits of each row that belong to the chunk then hold the X-dilated row;
//   3. Y and Z: byte rows are ORed three at a time with unaligned 8-byte loads, first along y, then along z;
//   4. an 8x8 byte transpose turns the z-major result into one word per y slice (bit x + 8 z).
// Technique after ../shared/research/masks-feasibility.md ("bit string" variant, without PEXT); the code is ours.
#include "vtp/physics/chunk_masks.h"

#include <immintrin.h>

#include <cstring>

namespace vtp::physics {

namespace {

constexpr int kSide = 10;              // box side [Unit: voxel]
constexpr int kRows = kSide * kSide;   // (y, z) rows of the box
constexpr int kBitBytes = 128;         // 1000 bits plus room for 8-byte loads past the last window

// Step 1: bit v of `solid` / `water` is set when box voxel v is solid-inside / water.
void classify(const terrain::Voxel* box, std::uint8_t* solid, std::uint8_t* water) {
  const __m256i low_byte = _mm256_set1_epi16(0x00FF), high_byte = _mm256_set1_epi16(short(0xFF00));
  const __m256i solid_bits = _mm256_set1_epi16(0x00FE), one = _mm256_set1_epi16(1), zero = _mm256_setzero_si256();
  // Per 16 voxels as u16 lanes (material low byte, occupancy high byte): solid-inside is the sign bit of
  // v & ~(material < 2); water is material == 1 with a nonzero occupancy.
  auto flags = [&](const terrain::Voxel* p, __m256i& s, __m256i& w) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    s = _mm256_andnot_si256(_mm256_cmpeq_epi16(_mm256_and_si256(v, solid_bits), zero), v);
    w = _mm256_andnot_si256(_mm256_cmpeq_epi16(_mm256_and_si256(v, high_byte), zero),
                            _mm256_cmpeq_epi16(_mm256_and_si256(v, low_byte), one));
  };
  // 32 voxels -> 32 bits: packs keeps each lane's sign, the permute undoes the 128-bit lane interleave.
  auto bits32 = [&](const terrain::Voxel* p, std::uint32_t& s_bits, std::uint32_t& w_bits) {
    __m256i s0, w0, s1, w1;
    flags(p, s0, w0);
    flags(p + 16, s1, w1);
    s_bits = std::uint32_t(_mm256_movemask_epi8(_mm256_permute4x64_epi64(_mm256_packs_epi16(s0, s1), 0xD8)));
    w_bits = std::uint32_t(_mm256_movemask_epi8(_mm256_permute4x64_epi64(_mm256_packs_epi16(w0, w1), 0xD8)));
  };
  std::uint32_t s_bits, w_bits;
  for (int v = 0; v + 32 <= kMaskBoxVolume; v += 32) {
    bits32(box + v, s_bits, w_bits);
    std::memcpy(solid + v / 8, &s_bits, 4);
    std::memcpy(water + v / 8, &w_bits, 4);
  }
  // The last 8 voxels: the final 32 voxels again (overlapping), keeping their top byte.
  bits32(box + kMaskBoxVolume - 32, s_bits, w_bits);
  solid[kMaskBoxVolume / 8 - 1] = std::uint8_t(s_bits >> 24);
  water[kMaskBoxVolume / 8 - 1] = std::uint8_t(w_bits >> 24);
}

// Steps 2-4 for one bit string: the dilated mask, plus the OR and AND of all its rows (for the tags).
void dilate(const std::uint8_t* bits, SliceMask& out, unsigned& any, unsigned& all) {
  // rows[y + 10 z]: byte x of the chunk row (box x = chunk x + 1) dilated along x; slack for 8-byte loads at y + 2.
  // Built in registers 8 rows at a time and stored as whole words, so the 8-byte loads below forward cleanly.
  alignas(16) std::uint8_t rows[kRows + 12];
  constexpr std::uint64_t kWindow = (std::uint64_t(1) << 40) - 1;
  std::uint64_t any_bits = 0, all_bits = kWindow;
  for (int pair = 0; pair < kRows / 8 + 1; ++pair) {
    // Two 4-row windows (5 bytes each, byte-aligned) give 8 row bytes; the last pair's second window is past the end.
    std::uint64_t packed = 0;
    for (int half = 0; half < 2; ++half) {
      const int window = 2 * pair + half;
      if (window >= kRows / 4) break;
      std::uint64_t w;
      std::memcpy(&w, bits + 5 * window, sizeof w);
      w &= kWindow;
      any_bits |= w;
      all_bits &= w;
      const std::uint64_t d = w | w >> 1 | w >> 2;  // bit x: box voxels x..x+2 (leaks across rows land in bits 8, 9)
      // Bits 0-7 of each 10-bit row, packed into 4 bytes.
      const std::uint64_t bytes = (d & 0xFF) | ((d >> 2) & 0xFF00) | ((d >> 4) & 0xFF0000) | ((d >> 6) & 0xFF000000);
      packed |= bytes << (32 * half);
    }
    std::memcpy(rows + 8 * pair, &packed, sizeof packed);
  }
  std::memset(rows + kRows + 4, 0, 8);
  // The 40-bit windows hold 4 rows each; fold them to one 10-bit row.
  auto fold = [](std::uint64_t w, bool and_rows) {
    unsigned r = unsigned(w) & 0x3FF;
    for (int k = 1; k < 4; ++k) r = and_rows ? r & unsigned(w >> (10 * k)) : r | unsigned(w >> (10 * k));
    return r & 0x3FF;
  };
  any = fold(any_bits, false);
  all = fold(all_bits, true);
  // Y then Z: OR of three neighbouring rows, eight rows per 8-byte word.
  std::uint64_t ydil[kSide];
  for (int z = 0; z < kSide; ++z) {
    std::uint64_t a, b, c;
    std::memcpy(&a, rows + kSide * z, 8);
    std::memcpy(&b, rows + kSide * z + 1, 8);
    std::memcpy(&c, rows + kSide * z + 2, 8);
    ydil[z] = a | b | c;  // byte y: box rows y..y+2 at this z
  }
  alignas(16) std::uint64_t zdil[8];
  for (int z = 0; z < 8; ++z) zdil[z] = ydil[z] | ydil[z + 1] | ydil[z + 2];  // byte y of chunk slice z
  // Transpose: zdil[z] byte y -> out[y] byte z.
  const __m128i a01 = _mm_load_si128(reinterpret_cast<const __m128i*>(zdil));
  const __m128i a23 = _mm_load_si128(reinterpret_cast<const __m128i*>(zdil + 2));
  const __m128i a45 = _mm_load_si128(reinterpret_cast<const __m128i*>(zdil + 4));
  const __m128i a67 = _mm_load_si128(reinterpret_cast<const __m128i*>(zdil + 6));
  const __m128i t0 = _mm_unpacklo_epi8(a01, _mm_unpackhi_epi64(a01, a01));  // (z0, z1) per y
  const __m128i t1 = _mm_unpacklo_epi8(a23, _mm_unpackhi_epi64(a23, a23));
  const __m128i t2 = _mm_unpacklo_epi8(a45, _mm_unpackhi_epi64(a45, a45));
  const __m128i t3 = _mm_unpacklo_epi8(a67, _mm_unpackhi_epi64(a67, a67));
  const __m128i u0 = _mm_unpacklo_epi16(t0, t1), u1 = _mm_unpackhi_epi16(t0, t1);  // (z0..z3) per y
  const __m128i u2 = _mm_unpacklo_epi16(t2, t3), u3 = _mm_unpackhi_epi16(t2, t3);  // (z4..z7) per y
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out.data()), _mm_unpacklo_epi32(u0, u2));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out.data() + 2), _mm_unpackhi_epi32(u0, u2));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out.data() + 4), _mm_unpacklo_epi32(u1, u3));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out.data() + 6), _mm_unpackhi_epi32(u1, u3));
}

}  // namespace

Result<ChunkMasks> buildChunkMasks(std::span<const terrain::Voxel> box) {
  if (box.size() != std::size_t(kMaskBoxVolume)) {
    return Error{ErrorCode::kInvalidArgument, "buildChunkMasks: the box must hold 10^3 voxels", {}};
  }
  alignas(16) std::uint8_t solid_bits[kBitBytes] = {}, water_bits[kBitBytes] = {};
  classify(box.data(), solid_bits, water_bits);
  ChunkMasks masks;
  unsigned solid_any, solid_all, water_any, water_all;
  dilate(solid_bits, masks.solid, solid_any, solid_all);
  dilate(water_bits, masks.water, water_any, water_all);
  if (solid_all == 0x3FF || water_all == 0x3FF || (solid_any | water_any) == 0) {
    const MaskTag tag = solid_all == 0x3FF ? MaskTag::kFullSolid
                        : water_all == 0x3FF ? MaskTag::kFullWater
                                             : MaskTag::kEmpty;
    return ChunkMasks{tag, {}, {}};
  }
  masks.tag = MaskTag::kMixed;
  return masks;
}

}  // namespace vtp::physics
