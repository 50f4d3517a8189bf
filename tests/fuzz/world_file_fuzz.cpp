// libFuzzer target for the world-file loader (terrain/src/world_file.cpp). For every input it checks:
// - decodeWorld never crashes, in strict and in salvage mode, and every rejection is kCorrupt with a byte offset
//   inside the file and a message naming the byte;
// - a strict success is a salvage success with no bad chunks and the same content;
// - whatever loads re-encodes to bytes that decode again to the very same bytes (load(save(w)) == w).
// CRC32s stop random mutations at the checksum, so each input is also decoded a second time with its header and
// record checksums (and the stated file length) recomputed: that copy reaches the material, zlib and voxel checks.
// Built with -fsanitize=fuzzer by tests/fuzz/CMakeLists.txt; tests/fuzz/replay_main.cpp runs the same function over
// the committed corpus in every build (ctest label `fuzz-replay`).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <zlib.h>

#include "vtp/terrain/world_file.h"
#include "world_format.h"

namespace {

using vtp::ErrorCode;
using vtp::Result;
using vtp::terrain::decodeWorld;
using vtp::terrain::encodeWorld;
using vtp::terrain::LoadedWorld;
using vtp::terrain::LoadOptions;
namespace format = vtp::terrain::format;

[[noreturn]] void fail(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "world_file_fuzz: %s %s\n", what, detail.c_str());
  std::abort();
}

std::uint32_t crcOf(const std::uint8_t* p, std::size_t n) {
  return std::uint32_t(::crc32(::crc32(0L, Z_NULL, 0), p, uInt(n)));
}

template <class T>
T load(const std::vector<std::uint8_t>& b, std::size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

template <class T>
void store(std::vector<std::uint8_t>& b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

// Rewrites the stated file length, the header CRC and every record CRC that the framing lets us find. Returns false
// when the input is too short or has no plausible header (nothing to fix).
bool fixChecksums(std::vector<std::uint8_t>& b) {
  if (b.size() < format::kFixedHeaderBytes + 4 || std::memcmp(b.data(), format::kMagic, 8) != 0) return false;
  const auto h = load<std::uint32_t>(b, 12);
  if (h < format::kFixedHeaderBytes + 4 || h > b.size()) return false;
  store<std::uint64_t>(b, 16, b.size());
  store<std::uint32_t>(b, h - 4, crcOf(b.data(), h - 4));
  std::size_t at = h;
  while (at + format::kRecordPrefixBytes <= b.size()) {
    const std::uint8_t kind = b[at + 12];
    std::size_t end = 0;  // offset of the record's CRC
    if (kind == format::kKindUniform) {
      end = at + format::kRecordPrefixBytes + 2;
    } else if (kind == format::kKindDeflate) {
      if (at + format::kRecordPrefixBytes + 4 > b.size()) break;
      end = at + format::kRecordPrefixBytes + 4 + load<std::uint32_t>(b, at + format::kRecordPrefixBytes);
    } else {
      break;
    }
    if (end + 4 > b.size()) break;
    store<std::uint32_t>(b, end, crcOf(b.data() + at, end - at));
    at = end + 4;
  }
  return true;
}

void checkRejection(const vtp::Error& e, std::size_t size) {
  if (e.code != ErrorCode::kCorrupt) fail("rejection is not kCorrupt:", e.message);
  if (!e.byte_offset || *e.byte_offset > size) fail("rejection without a byte offset inside the file:", e.message);
  if (e.message.empty() || e.message.find('\n') != std::string::npos) fail("message is not one line:", e.message);
  if (e.message.find("byte") == std::string::npos) fail("message does not name the byte:", e.message);
}

// load(save(w)) == w, checked on bytes: encoding is deterministic and canonical.
void checkRoundTrip(const LoadedWorld& loaded) {
  const std::vector<std::uint8_t> once = encodeWorld(*loaded.world);
  Result<LoadedWorld> again = decodeWorld(once);
  if (!again) fail("re-encoded world does not load:", again.error().message);
  if (!again->bad_chunks.empty()) fail("re-encoded world has bad chunks");
  if (encodeWorld(*again->world) != once) fail("re-encoded world does not round-trip byte for byte");
}

void checkOne(std::span<const std::uint8_t> bytes) {
  LoadOptions options;
  options.max_file_bytes = 1 << 20;
  Result<LoadedWorld> strict = decodeWorld(bytes, options);
  options.salvage = true;
  Result<LoadedWorld> salvaged = decodeWorld(bytes, options);
  if (strict) {
    if (!strict->bad_chunks.empty()) fail("strict load lists bad chunks");
    if (!salvaged) fail("strict load succeeded but salvage failed:", salvaged.error().message);
    if (!salvaged->bad_chunks.empty()) fail("salvage found bad chunks in a file strict mode accepts");
    if (encodeWorld(*strict->world) != encodeWorld(*salvaged->world)) fail("strict and salvage loads differ");
    checkRoundTrip(*strict);
  } else {
    checkRejection(strict.error(), bytes.size());
    if (salvaged) {
      // Salvage accepts only what strict rejects for a chunk's content.
      if (salvaged->bad_chunks.empty()) fail("salvage accepted a rejected file without listing a bad chunk");
      for (const vtp::terrain::BadChunk& bad : salvaged->bad_chunks) {
        if (bad.byte_offset >= bytes.size()) fail("bad chunk offset outside the file");
        if (bad.problem.empty() || bad.problem.find('\n') != std::string::npos) fail("bad chunk problem not one line");
      }
      checkRoundTrip(*salvaged);
    } else {
      checkRejection(salvaged.error(), bytes.size());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  checkOne(std::span<const std::uint8_t>(data, size));
  std::vector<std::uint8_t> fixed(data, data + size);
  if (fixChecksums(fixed)) checkOne(fixed);
  return 0;
}
