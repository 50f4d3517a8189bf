#pragma once
/// \file
/// World files (`.vtw`): load with full validation, save atomically. The byte layout is specified in
/// terrain/src/world_format.h; README "World files" summarises it.
///
/// Guarantees
/// - Deterministic: encoding the same world twice gives identical bytes (records sorted by chunk, fixed zlib level).
/// - Every byte is covered by a CRC32 (header and each record), and the header states the file length, so any
///   single-byte change and any truncation is detected.
/// - Loading never crashes, never allocates more than the stated limits, and never hands back a partial world
///   silently: it fails with kCorrupt naming the byte offset and the problem, or, in salvage mode, replaces each bad
///   chunk with air and lists it.
/// - Saving is atomic: temp file in the same directory (O_EXCL), write, fsync, rename over the target, fsync the
///   directory. A crash leaves the old file or the new one. Orphaned temp files are never read by load.
/// Thread-safety: all functions are safe to call concurrently with reads and edits of the World they save (the save
/// encodes a WorldSnapshot).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vtp/terrain/coords.h"
#include "vtp/terrain/status.h"
#include "vtp/terrain/world.h"

namespace vtp::terrain {

/// How strict loading is and how much it may read.
struct LoadOptions {
  /// false: any problem fails the load. true: a chunk record with a bad checksum, payload or voxel is replaced by air
  /// and listed in LoadedWorld::bad_chunks; problems in the header or record framing still fail.
  bool salvage = false;
  /// Files longer than this are refused before reading. [Unit: byte]
  std::uint64_t max_file_bytes = std::uint64_t(1) << 30;
};

/// A chunk record that salvage mode dropped.
struct BadChunk {
  ChunkCoord coord;           ///< As stated in the record (may itself be damaged).
  std::uint64_t byte_offset;  ///< Start of the record. [Unit: byte]
  std::string problem;        ///< One line.
};

struct LoadedWorld {
  std::unique_ptr<World> world;
  std::vector<BadChunk> bad_chunks;  ///< Empty unless LoadOptions::salvage found damage.
};

/// Decodes a world from bytes in memory.
Result<LoadedWorld> decodeWorld(std::span<const std::uint8_t> bytes, const LoadOptions& options = {});
/// Reads and decodes a world file. kIo when it cannot be read.
Result<LoadedWorld> loadWorldFile(const std::filesystem::path& path, const LoadOptions& options = {});
/// Encodes a consistent snapshot of the world.
std::vector<std::uint8_t> encodeWorld(const World& world);
/// Encodes and writes atomically (see above). On error the previous file, if any, is untouched.
Status saveWorldFile(const World& world, const std::filesystem::path& path);

}  // namespace vtp::terrain
