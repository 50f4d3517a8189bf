#pragma once
// The `.vtw` world file layout, version 1. All integers little-endian; floats IEEE-754.
//
//   header
//     0   8  magic "VTPWORLD"
//     8   4  u32 format version (1)
//     12  4  u32 header length H, CRC included [bytes]
//     16  8  u64 file length [bytes]
//     24  8  u64 record count
//     32  8  f64 voxel size [world units per voxel]
//     40  2  u16 number of solid materials M (ids strictly increasing)
//     42  .. M x { u8 id, u8 name length L, L name bytes, f32 friction, f32 restitution, f32 density }
//     H-4 4  u32 CRC32 of bytes [0, H-4)
//   records, sorted by ChunkCoord (z, then y, then x), no duplicates, each:
//     0   12 i32 x, y, z chunk coordinate
//     12  1  u8 kind: 1 uniform, 2 deflate
//     kind 1: 13 1 material, 14 1 occupancy                      (never air: air chunks are not stored)
//     kind 2: 13 4 u32 payload length P <= compressBound(1024), P bytes zlib stream inflating to exactly 1024 bytes:
//             512 materials then 512 occupancies in chunkIndex order (never all equal: that is kind 1)
//     end-4  4  u32 CRC32 of the record's preceding bytes
//   nothing after the last record.
// Every byte lies under a CRC, and the header states the file length, so any single-byte change or truncation fails.

#include <cstddef>
#include <cstdint>

namespace vtp::terrain::format {

inline constexpr char kMagic[8] = {'V', 'T', 'P', 'W', 'O', 'R', 'L', 'D'};
inline constexpr std::uint32_t kVersion = 1;
inline constexpr std::size_t kFixedHeaderBytes = 42;       // up to the material entries
inline constexpr std::size_t kMaxHeaderBytes = 64 * 1024;  // 254 materials x 46 bytes fit easily
inline constexpr std::uint8_t kKindUniform = 1;
inline constexpr std::uint8_t kKindDeflate = 2;
inline constexpr std::size_t kRecordPrefixBytes = 13;      // coordinate + kind
inline constexpr std::size_t kMinRecordBytes = 13 + 2 + 4; // a uniform record
inline constexpr std::size_t kPayloadBytes = 1024;         // 512 materials + 512 occupancies
inline constexpr int kZlibLevel = 6;

}  // namespace vtp::terrain::format
