// Loading and saving `.vtw` files; the layout is in world_format.h. Decoding treats every byte as untrusted: bounds
// are checked before each read, inflation is capped at the exact payload size (zlib's 1032:1 worst case cannot
// bite), and nothing reaches the World until the record has passed every check.
#include "vtp/terrain/world_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <new>
#include <string>

#include "vtp/terrain/file_replace.h"
#include "chunk_table.h"
#include "epoch_domain.h"
#include "world_format.h"

namespace vtp::terrain {

// Inserts decoded chunks into a fresh world, bypassing edits (the loader has validated them).
class WorldLoader {
 public:
  static void adopt(World& world, ChunkCoord c, std::unique_ptr<const Chunk> chunk) {
    ChunkTable::Slot& slot = world.m_table->slotFor(c);
    world.m_epochs->reserve(1);
    world.m_table->publish(slot, std::move(chunk));
  }
  /// Frees the tables outgrown while loading (nothing else can hold them yet).
  static void finish(World& world) { world.m_epochs->advanceAndReclaim(); }
};

namespace {

using Bytes = std::span<const std::uint8_t>;

std::uint32_t crc32Of(Bytes bytes) {
  return std::uint32_t(::crc32(::crc32(0L, Z_NULL, 0), bytes.data(), uInt(bytes.size())));
}

// --- Encoding ---

class Writer {
 public:
  std::vector<std::uint8_t> bytes;
  void u8(std::uint8_t v) { bytes.push_back(v); }
  void u16(std::uint16_t v) { raw(&v, 2); }
  void u32(std::uint32_t v) { raw(&v, 4); }
  void u64(std::uint64_t v) { raw(&v, 8); }
  void i32(std::int32_t v) { raw(&v, 4); }
  void f32(float v) { raw(&v, 4); }
  void f64(double v) { raw(&v, 8); }
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + n);  // x86-64 is little-endian, the file's byte order
  }
  template <class T>
  void patch(std::size_t at, T v) { std::memcpy(bytes.data() + at, &v, sizeof v); }
  void crcFrom(std::size_t start) { u32(crc32Of(Bytes(bytes).subspan(start))); }
};

void encodeRecord(Writer& w, ChunkCoord c, const Chunk& chunk) {
  const std::size_t start = w.bytes.size();
  w.i32(c.x);
  w.i32(c.y);
  w.i32(c.z);
  if (chunk.isUniform()) {
    w.u8(format::kKindUniform);
    w.u8(chunk.uniformValue().material);
    w.u8(chunk.uniformValue().occupancy);
  } else {
    std::array<std::uint8_t, format::kPayloadBytes> raw;
    for (int i = 0; i < kChunkVolume; ++i) {
      raw[i] = chunk.dense()[i].material;
      raw[kChunkVolume + i] = chunk.dense()[i].occupancy;
    }
    std::array<std::uint8_t, 2048> packed;  // > compressBound(1024)
    uLongf packed_len = packed.size();
    // compress2 cannot fail here: the buffer exceeds compressBound and the level is valid.
    ::compress2(packed.data(), &packed_len, raw.data(), raw.size(), format::kZlibLevel);
    w.u8(format::kKindDeflate);
    w.u32(std::uint32_t(packed_len));
    w.raw(packed.data(), packed_len);
  }
  w.crcFrom(start);
}

// --- Decoding ---

// Messages are one printable line, yet a material table error quotes the name read from the file: escape its bytes.
std::string printable(const std::string& text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char ch : text) {
    const auto b = static_cast<unsigned char>(ch);
    if (b >= 0x20 && b < 0x7f && b != '\\') {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
  }
  return out;
}

Error corrupt(std::uint64_t offset, const std::string& problem) {
  return Error{ErrorCode::kCorrupt, "corrupt world file at byte " + std::to_string(offset) + ": " + problem, offset};
}

class Reader {
 public:
  explicit Reader(Bytes b) : m_b(b) {}
  std::size_t pos() const { return m_pos; }
  std::size_t left() const { return m_b.size() - m_pos; }
  bool has(std::size_t n) const { return left() >= n; }
  template <class T>
  T get() {
    T v;
    std::memcpy(&v, m_b.data() + m_pos, sizeof v);
    m_pos += sizeof v;
    return v;
  }
  Bytes range(std::size_t from, std::size_t to) const { return m_b.subspan(from, to - from); }
  Bytes take(std::size_t n) {
    Bytes s = m_b.subspan(m_pos, n);
    m_pos += n;
    return s;
  }

 private:
  Bytes m_b;
  std::size_t m_pos = 0;
};

Error outOfMemory(const char* what) {
  return Error{ErrorCode::kOutOfMemory, std::string("out of memory while ") + what, {}};
}

// The header, from `bytes`: the file's first min(file_size, kMaxHeaderBytes) bytes (so a file that is not a world,
// or states more than the limits allow, is refused before the rest is read).
Result<WorldConfig> decodeHeader(Bytes bytes, std::uint64_t file_size, const LoadOptions& options,
                                 std::size_t& header_len, std::uint64_t& record_count) {
  if (file_size < format::kFixedHeaderBytes + 4) {
    return corrupt(file_size, "file is truncated (" + std::to_string(file_size) + " bytes, shorter than a header)");
  }
  if (file_size > options.max_file_bytes) {
    return Error{ErrorCode::kLimitExceeded, "file is larger than the load limit (LoadOptions::max_file_bytes)", {}};
  }
  Reader r(bytes);
  if (std::memcmp(r.take(8).data(), format::kMagic, 8) != 0) return corrupt(0, "bad magic (not a vtp world file)");
  const auto version = r.get<std::uint32_t>();
  if (version != format::kVersion) {
    return corrupt(8, "unsupported format version " + std::to_string(version) + " (this build reads 1)");
  }
  const auto h = r.get<std::uint32_t>();
  if (h < format::kFixedHeaderBytes + 4 || h > format::kMaxHeaderBytes || h > file_size) {
    return corrupt(12, "header length " + std::to_string(h) + " is impossible for a " + std::to_string(file_size) +
                           "-byte file");
  }
  std::uint32_t stored_crc;
  std::memcpy(&stored_crc, bytes.data() + h - 4, 4);
  if (crc32Of(bytes.first(h - 4)) != stored_crc) return corrupt(h - 4, "header checksum mismatch");
  const auto file_len = r.get<std::uint64_t>();
  if (file_len != file_size) {
    return corrupt(16, "header says the file has " + std::to_string(file_len) + " bytes but it has " +
                           std::to_string(file_size) + (file_len > file_size ? " (truncated)" : " (trailing bytes)"));
  }
  record_count = r.get<std::uint64_t>();
  if (record_count > (file_size - h) / format::kMinRecordBytes) {
    return corrupt(24, "record count " + std::to_string(record_count) + " cannot fit in the file");
  }
  if (record_count > options.max_memory_bytes / kUniformChunkLoadBytes) {
    return Error{ErrorCode::kLimitExceeded,
                 "the file's " + std::to_string(record_count) + " chunks need more memory than the load limit (" +
                     std::to_string(options.max_memory_bytes) + " bytes, LoadOptions::max_memory_bytes)",
                 {}};
  }
  WorldConfig config;
  config.voxel_size = r.get<double>();
  config.materials = MaterialTable();
  const auto count = r.get<std::uint16_t>();
  if (count > 254) return corrupt(40, "material count " + std::to_string(count) + " is over 254");
  int last_id = 1;
  for (int i = 0; i < count; ++i) {
    const std::size_t at = r.pos();
    if (r.pos() + 2 > h - 4) return corrupt(at, "material table runs past the header");
    const auto id = r.get<std::uint8_t>();
    const auto len = r.get<std::uint8_t>();
    if (r.pos() + len + 12 > h - 4) return corrupt(at, "material table runs past the header");
    if (id <= last_id) return corrupt(at, "material ids not strictly increasing (id " + std::to_string(id) + ")");
    last_id = id;
    Material m;
    const Bytes name = r.take(len);
    m.name.assign(name.begin(), name.end());
    m.friction = r.get<float>();
    m.restitution = r.get<float>();
    m.density = r.get<float>();
    if (Status s = config.materials.define(id, m); !s) return corrupt(at, printable(s.error().message));
  }
  if (r.pos() != h - 4) return corrupt(r.pos(), "header has unexplained bytes after the material table");
  if (Status s = validateConfig(config); !s) return corrupt(32, s.error().message);
  header_len = h;
  return config;
}

bool chunkInRange(ChunkCoord c) {
  auto ok = [](std::int32_t v) { return v >= kMinChunk && v <= kMaxChunk; };
  return ok(c.x) && ok(c.y) && ok(c.z);
}

// A chunk at kMinChunk on an axis has its first plane at -kStorageLimit on that axis, outside storage (|v| <
// kStorageLimit): only air may lie there, as edits ensure. The index of the first voxel that is not, or -1.
int firstUnstorable(ChunkCoord c, std::span<const Voxel> voxels) {
  if (c.x != kMinChunk && c.y != kMinChunk && c.z != kMinChunk) return -1;
  for (int i = 0; i < int(voxels.size()); ++i) {
    const VoxelCoord v{c.x * kChunkSize + i % kChunkSize, c.y * kChunkSize + i / kChunkSize % kChunkSize,
                       c.z * kChunkSize + i / (kChunkSize * kChunkSize)};
    if (voxels[std::size_t(i)] != kAir && !insideStorage(v)) return i;
  }
  return -1;
}

// One inflate stream for all records of a load (zlib's window is allocated once, not per record). A payload must
// inflate to exactly `out.size()` bytes and use all its input; a preset dictionary is refused.
class Inflater {
 public:
  Inflater() {
    // zlib's allocations through operator new (nothrow), like the rest of the library's: a process limit or a test's
    // allocation hook reaches them too.
    m_z.zalloc = [](voidpf, uInt items, uInt size) -> voidpf {
      return ::operator new(std::size_t(items) * size, std::nothrow);
    };
    m_z.zfree = [](voidpf, voidpf p) { ::operator delete(p); };
    m_init = ::inflateInit(&m_z);
  }
  ~Inflater() {
    if (ready()) ::inflateEnd(&m_z);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  bool ready() const { return m_init == Z_OK; }
  int initError() const { return m_init; }
  enum class Outcome { kExact, kBad, kOutOfMemory };
  Outcome inflate(Bytes in, std::span<std::uint8_t> out) {
    if (::inflateReset(&m_z) != Z_OK) return Outcome::kBad;
    m_z.next_in = const_cast<Bytef*>(in.data());  // zlib's API is not const; it only reads the input
    m_z.avail_in = uInt(in.size());
    m_z.next_out = out.data();
    m_z.avail_out = uInt(out.size());
    const int rc = ::inflate(&m_z, Z_FINISH);  // in one call: zlib needs no window (it allocates only in init)
    if (rc == Z_MEM_ERROR) return Outcome::kOutOfMemory;
    // Z_BUF_ERROR means more output was coming: an inflated size over the payload's is as corrupt as one under it.
    return rc == Z_STREAM_END && m_z.avail_out == 0 && m_z.avail_in == 0 ? Outcome::kExact : Outcome::kBad;
  }

 private:
  z_stream m_z{};
  int m_init = Z_OK;  // inflateInit's result
};

// One record's content problem (salvageable) or its chunk.
struct RecordOutcome {
  ChunkCoord coord;
  std::unique_ptr<const Chunk> chunk;  // null with `problem` set when the record is bad
  std::string problem;
};

// Framing errors (cannot find the next record) and running out of memory are returned as Error; content problems in
// RecordOutcome.
Result<RecordOutcome> decodeRecord(Reader& r, const MaterialTable& materials, Inflater& inflater) {
  const std::size_t start = r.pos();
  if (!r.has(format::kRecordPrefixBytes)) return corrupt(start, "record is truncated");
  RecordOutcome out;
  out.coord.x = r.get<std::int32_t>();
  out.coord.y = r.get<std::int32_t>();
  out.coord.z = r.get<std::int32_t>();
  const auto kind = r.get<std::uint8_t>();
  std::size_t body = 0;
  if (kind == format::kKindUniform) {
    body = 2;
  } else if (kind == format::kKindDeflate) {
    if (!r.has(4)) return corrupt(r.pos(), "record is truncated");
    const auto len = r.get<std::uint32_t>();
    if (len > ::compressBound(format::kPayloadBytes)) {
      return corrupt(r.pos() - 4, "payload length " + std::to_string(len) + " is over the bound for 1024 bytes");
    }
    body = len;
  } else {
    return corrupt(start + 12, "unknown record kind " + std::to_string(kind));
  }
  if (!r.has(body + 4)) return corrupt(r.pos(), "record is truncated");
  const Bytes payload = r.take(body);
  const std::size_t crc_at = r.pos();
  const auto stored_crc = r.get<std::uint32_t>();
  auto bad = [&](std::size_t at, std::string problem) {
    out.problem = "byte " + std::to_string(at) + ": " + std::move(problem);
    return std::move(out);
  };
  if (crc32Of(r.range(start, crc_at)) != stored_crc) {
    return bad(crc_at, "record checksum mismatch");
  }
  if (!chunkInRange(out.coord)) return bad(start, "chunk coordinate outside the storage range");
  if (kind == format::kKindUniform) {
    const Voxel v{payload[0], payload[1]};
    if (v == kAir) return bad(start + 13, "uniform record holds air (air chunks are not stored)");
    if (!isCanonical(v)) return bad(start + 13, "uniform record voxel is non-canonical");
    if (!materials.contains(v.material)) return bad(start + 13, "undefined material " + std::to_string(v.material));
    if (firstUnstorable(out.coord, std::span(&v, 1)) >= 0) {
      return bad(start + 13, "uniform record fills voxels outside the storage range (|v| < 2^24)");
    }
    out.chunk = Chunk::makeUniform(1, v);
    return out;
  }
  std::array<std::uint8_t, format::kPayloadBytes> raw;
  const Inflater::Outcome inflated = inflater.inflate(payload, raw);
  if (inflated == Inflater::Outcome::kOutOfMemory) return outOfMemory("inflating a chunk record");
  if (inflated != Inflater::Outcome::kExact) return bad(start + 17, "payload does not inflate to exactly 1024 bytes");
  std::array<Voxel, kChunkVolume> voxels;
  bool all_equal = true;
  for (int i = 0; i < kChunkVolume; ++i) {
    voxels[i] = Voxel{raw[i], raw[kChunkVolume + i]};
    if (!isCanonical(voxels[i])) return bad(start + 17, "non-canonical voxel " + std::to_string(i));
    if (!materials.contains(voxels[i].material)) {
      return bad(start + 17, "voxel " + std::to_string(i) + " has undefined material " + std::to_string(raw[i]));
    }
    all_equal = all_equal && voxels[i] == voxels[0];
  }
  if (all_equal) return bad(start + 17, "dense record holds a uniform chunk (non-canonical)");
  if (const int i = firstUnstorable(out.coord, voxels); i >= 0) {
    return bad(start + 17, "voxel " + std::to_string(i) + " lies outside the storage range (|v| < 2^24)");
  }
  out.chunk = Chunk::make(1, voxels);
  return out;
}

}  // namespace

std::vector<std::uint8_t> encodeWorld(const World& world) {
  const WorldSnapshot snap = world.snapshot();
  Writer w;
  w.raw(format::kMagic, 8);
  w.u32(format::kVersion);
  w.u32(0);  // header length, patched below
  w.u64(0);  // file length, patched below
  w.u64(snap.chunks().size());
  w.f64(world.voxelSize());
  const MaterialTable& mats = world.materials();
  w.u16(std::uint16_t(mats.size() - 2));
  for (int id = kFirstSolidMaterial; id < 256; ++id) {
    if (!mats.contains(std::uint8_t(id))) continue;
    const Material& m = mats[std::uint8_t(id)];
    w.u8(std::uint8_t(id));
    w.u8(std::uint8_t(m.name.size()));
    w.raw(m.name.data(), m.name.size());
    w.f32(m.friction);
    w.f32(m.restitution);
    w.f32(m.density);
  }
  w.patch(12, std::uint32_t(w.bytes.size() + 4));
  const std::size_t header_crc_at = w.bytes.size();
  w.u32(0);  // header CRC, computed once the file length is known
  for (const WorldSnapshot::Entry& e : snap.chunks()) encodeRecord(w, e.coord, *e.chunk);
  w.patch(16, std::uint64_t(w.bytes.size()));
  w.patch(header_crc_at, crc32Of(Bytes(w.bytes).first(header_crc_at)));
  return std::move(w.bytes);
}

namespace {

// decodeWorld once the header has been read: the records into a new world.
Result<LoadedWorld> decodeRecords(Bytes bytes, const LoadOptions& options, std::size_t header_len,
                                  std::uint64_t record_count, WorldConfig config) {
  Inflater inflater;
  if (!inflater.ready()) {
    if (inflater.initError() == Z_MEM_ERROR) return outOfMemory("starting zlib");
    return Error{ErrorCode::kIo, "zlib could not start (inflateInit " + std::to_string(inflater.initError()) + ")",
                 {}};
  }
  Result<std::unique_ptr<World>> world = World::create(std::move(config));
  if (!world) return world.error();
  LoadedWorld loaded{std::move(world.value()), {}};
  Reader r(bytes);
  r.take(header_len);
  bool have_last = false;
  ChunkCoord last{};
  std::uint64_t memory = 0;  // as LoadOptions::max_memory_bytes counts it
  auto salvage = [&](ChunkCoord coord, std::size_t start, const std::string& problem) -> Status {
    if (loaded.bad_chunks.size() >= options.max_bad_chunks) {
      return corrupt(start, "more than " + std::to_string(options.max_bad_chunks) +
                                " bad chunk records (LoadOptions::max_bad_chunks); the next: " + problem);
    }
    loaded.bad_chunks.push_back({coord, start, problem});
    return {};
  };
  for (std::uint64_t i = 0; i < record_count; ++i) {
    const std::size_t start = r.pos();
    Result<RecordOutcome> rec = decodeRecord(r, loaded.world->materials(), inflater);
    if (!rec) return rec.error();
    if (!rec->problem.empty()) {
      if (!options.salvage) return corrupt(start, "chunk record " + std::to_string(i) + ": " + rec->problem);
      if (Status s = salvage(rec->coord, start, rec->problem); !s) return s.error();
      continue;
    }
    if (have_last && !(last < rec->coord)) {
      const std::string what = last == rec->coord ? "duplicate chunk" : "chunk records out of order";
      if (!options.salvage) return corrupt(start, what + " at record " + std::to_string(i));
      if (Status s = salvage(rec->coord, start, what); !s) return s.error();
      continue;
    }
    memory += rec->chunk->isUniform() ? kUniformChunkLoadBytes : kDenseChunkLoadBytes;
    if (memory > options.max_memory_bytes) {
      return Error{ErrorCode::kLimitExceeded,
                   "the world's chunks need more memory than the load limit (" +
                       std::to_string(options.max_memory_bytes) + " bytes, LoadOptions::max_memory_bytes) at record " +
                       std::to_string(i),
                   {}};
    }
    have_last = true;
    last = rec->coord;
    WorldLoader::adopt(*loaded.world, rec->coord, std::move(rec->chunk));
  }
  if (r.left() != 0) return corrupt(r.pos(), std::to_string(r.left()) + " trailing bytes after the last record");
  WorldLoader::finish(*loaded.world);
  return loaded;
}

}  // namespace

Result<LoadedWorld> decodeWorld(Bytes bytes, const LoadOptions& options) {
  try {
    std::size_t header_len = 0;
    std::uint64_t record_count = 0;
    Result<WorldConfig> config = decodeHeader(bytes.first(std::min(bytes.size(), format::kMaxHeaderBytes)),
                                              bytes.size(), options, header_len, record_count);
    if (!config) return config.error();
    return decodeRecords(bytes, options, header_len, record_count, std::move(config.value()));
  } catch (const std::bad_alloc&) {
    return outOfMemory("loading the world");
  }
}

Result<LoadedWorld> loadWorldFile(const std::filesystem::path& path, const LoadOptions& options) {
  auto io = [&](const char* what) {
    return Error{ErrorCode::kIo, std::string(what) + " " + path.string() + ": " + std::strerror(errno), {}};
  };
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the regular-file check below then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return io("cannot open");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return io("cannot stat");
  if (!S_ISREG(st.st_mode)) return Error{ErrorCode::kIo, path.string() + " is not a regular file", {}};
  const auto size = std::uint64_t(st.st_size);
  if (size > options.max_file_bytes) {
    return Error{ErrorCode::kLimitExceeded,
                 path.string() + " is larger than the load limit (LoadOptions::max_file_bytes)", {}};
  }
  // Reads bytes [from, to) of the file into `bytes`.
  auto readRange = [&](std::vector<std::uint8_t>& bytes, std::size_t from, std::size_t to) -> Status {
    for (std::size_t got = from; got < to;) {
      const ssize_t n = ::read(fd, bytes.data() + got, to - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return io("cannot read");
      if (n == 0) {
        return Error{ErrorCode::kIo, path.string() + " shrank while it was read (" + std::to_string(got) + " of " +
                                         std::to_string(to) + " bytes)", {}};
      }
      got += std::size_t(n);
    }
    return {};
  };
  try {
    // The header first: a file that is not a world, or states more than the limits allow, is refused before the
    // rest of it is allocated (a 900 MB file of zeros once took 926 MB to be told its magic is wrong).
    std::vector<std::uint8_t> bytes(std::min<std::size_t>(size, format::kMaxHeaderBytes));
    if (Status s = readRange(bytes, 0, bytes.size()); !s) return s.error();
    std::size_t header_len = 0;
    std::uint64_t record_count = 0;
    Result<WorldConfig> config = decodeHeader(bytes, size, options, header_len, record_count);
    if (!config) return config.error();
    const std::size_t head = bytes.size();
    bytes.resize(std::size_t(size));
    if (Status s = readRange(bytes, head, bytes.size()); !s) return s.error();
    return decodeRecords(bytes, options, header_len, record_count, std::move(config.value()));
  } catch (const std::bad_alloc&) {
    return outOfMemory(("reading " + path.string()).c_str());
  }
}

Status saveWorldFile(const World& world, const std::filesystem::path& path) {
  try {
    // The target is checked and the temp file made before the world is encoded: a save that cannot land (a
    // directory, an unwritable one) fails at once, not after seconds of encoding a large world.
    Result<FileReplacement> file = FileReplacement::open(path);
    if (!file) return file.error();
    if (Status s = file->write(encodeWorld(world)); !s) return s;
    return file->commit();
  } catch (const std::bad_alloc&) {
    return outOfMemory("saving the world");
  }
}

}  // namespace vtp::terrain
