#pragma once
/// \file
/// World files (`.vtw`): load with full validation, save atomically. The byte layout is specified in
/// terrain/src/world_format.h; terrain/README.md "World files" summarises it.
///
/// Guarantees
/// - Deterministic: encoding the same world twice gives identical bytes (records sorted by chunk, fixed zlib level).
/// - Every byte is covered by a CRC32 (header and each record), and the header states the file length, so any
///   single-byte change and any truncation is detected.
/// - Loading never crashes, never allocates more than the stated limits, and never hands back a partial world
///   silently: it fails with kCorrupt naming the byte offset and the problem, or, in salvage mode, replaces each bad
///   chunk with air and lists it. loadWorldFile reads and checks the header (at most 64 KiB) before it allocates
///   the rest of the file. A world over LoadOptions::max_memory_bytes fails with kLimitExceeded, and an allocation
///   that fails below it (the process's own limit) with kOutOfMemory, never an exception.
/// - Saving is atomic (FileReplacement, file_replace.h): temp file in the same directory (O_EXCL), write, fsync, rename
///   over the target, fsync the directory. A crash leaves the old file or the new one. The temp file a crash leaves
///   is never read by load, and a later save of the same target removes it once it is a minute old.
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
  /// Files longer than this are refused before reading (kLimitExceeded). [Unit: byte]
  std::uint64_t max_file_bytes = std::uint64_t(1) << 30;
  /// The loaded chunks' memory may not exceed this (kLimitExceeded). It is counted as the records decode, at the
  /// peak resident bytes measured per chunk, its share of the chunk map included (kUniformChunkLoadBytes and
  /// kDenseChunkLoadBytes), and a file whose record count alone passes it is refused before anything is allocated.
  /// A 1 GiB file of the smallest dense records would otherwise take about 32 GB. Not counted: the file's bytes and
  /// salvage's list (at most max_bad_chunks entries of about 100 bytes). [Unit: byte]
  std::uint64_t max_memory_bytes = std::uint64_t(4) << 30;
  /// Salvage mode fails (kCorrupt) once more records than this are bad: each is listed, so a file of millions of
  /// damaged records would otherwise make a list of millions.
  std::size_t max_bad_chunks = std::size_t(1) << 16;
};

/// What LoadOptions::max_memory_bytes counts per loaded chunk: the peak resident bytes per record while loading
/// 2^20 + 1 records (just past a growth of the chunk map, whose outgrown tables are freed when the load ends): 304
/// uniform, 1,328 dense; rounded up. [Unit: byte]
inline constexpr std::uint64_t kUniformChunkLoadBytes = 320;
inline constexpr std::uint64_t kDenseChunkLoadBytes = 1408;

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
/// Encodes a consistent snapshot of the world. Throws std::bad_alloc when memory runs out (saveWorldFile returns
/// kOutOfMemory instead).
std::vector<std::uint8_t> encodeWorld(const World& world);
/// Opens a FileReplacement of `path` (its errors, links, modes and refusals, before anything is encoded), encodes
/// and writes into it, and commits. On error the previous file, if any, is untouched, except when opening or syncing
/// the directory after the rename fails: the message then says the new file is in place.
Status saveWorldFile(const World& world, const std::filesystem::path& path);

}  // namespace vtp::terrain
