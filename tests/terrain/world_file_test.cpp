// World files (terrain/src/world_file.cpp, layout in world_format.h): round trips, atomic saves, and a loader that
// rejects every damaged, truncated, padded, oversized or non-canonical input with its own message. Bad files are
// built by hand with a test-local encoder (valid CRCs, valid header), so each case fails for the one reason it names.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <new>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "support/random_world.h"
#include "support/temp_dir.h"
#include "support/alloc_probe.h"
#include "vtp/terrain/world.h"
#include "vtp/terrain/world_file.h"
#include "world_format.h"

using namespace vtp::test::alloc_probe;
using namespace vtp::terrain;
using vtp::Error;
using vtp::ErrorCode;
using vtp::Result;
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<std::uint8_t>;

// --- A test-local encoder, written from world_format.h --------------------------------------------------------------

std::uint32_t crcOf(std::span<const std::uint8_t> b) {
  return std::uint32_t(::crc32(::crc32(0L, Z_NULL, 0), b.data(), uInt(b.size())));
}

template <class T>
void put(Bytes& b, T v) {
  const std::size_t at = b.size();
  b.resize(at + sizeof v);
  std::memcpy(b.data() + at, &v, sizeof v);
}

template <class T>
void poke(Bytes& b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

template <class T>
T peek(const Bytes& b, std::size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

// One record: coordinate, kind, body, CRC over all of it. (noinline: inlined into a loop, g++ 12 reports a false
// -Wstringop-overflow in the vector's growth.)
[[gnu::noinline]] Bytes record(ChunkCoord c, std::uint8_t kind, std::span<const std::uint8_t> body) {
  Bytes b;
  put(b, c.x);
  put(b, c.y);
  put(b, c.z);
  b.push_back(kind);
  b.insert(b.end(), body.begin(), body.end());
  put(b, crcOf(b));
  return b;
}

Bytes uniformRecord(ChunkCoord c, Voxel v) {
  const std::uint8_t body[2] = {v.material, v.occupancy};
  return record(c, format::kKindUniform, body);
}

// A deflate record around any payload, whatever it inflates to; `stated_len` overrides the length field.
Bytes deflateRecord(ChunkCoord c, std::span<const std::uint8_t> payload, std::optional<std::uint32_t> stated_len = {}) {
  Bytes body;
  put(body, stated_len.value_or(std::uint32_t(payload.size())));
  body.insert(body.end(), payload.begin(), payload.end());
  return record(c, format::kKindDeflate, body);
}

Bytes zlibCompress(std::span<const std::uint8_t> raw, int level = format::kZlibLevel) {
  uLongf len = ::compressBound(uLong(raw.size()));
  Bytes out(len);
  REQUIRE(::compress2(out.data(), &len, raw.data(), uLong(raw.size()), level) == Z_OK);
  out.resize(len);
  return out;
}

// 512 materials then 512 occupancies, the payload layout.
Bytes rawPayload(std::span<const Voxel, kChunkVolume> voxels) {
  Bytes raw(format::kPayloadBytes);
  for (int i = 0; i < kChunkVolume; ++i) {
    raw[std::size_t(i)] = voxels[std::size_t(i)].material;
    raw[std::size_t(kChunkVolume + i)] = voxels[std::size_t(i)].occupancy;
  }
  return raw;
}

Bytes denseRecord(ChunkCoord c, std::span<const Voxel, kChunkVolume> voxels) {
  return deflateRecord(c, zlibCompress(rawPayload(voxels)));
}

// A dense chunk with a little of everything: air, water, rock, dirt.
std::array<Voxel, kChunkVolume> mixedVoxels() {
  std::array<Voxel, kChunkVolume> v{};
  for (int i = 0; i < kChunkVolume; ++i) {
    v[std::size_t(i)] = i % 5 == 0 ? kAir : Voxel{std::uint8_t(1 + i % 3), std::uint8_t(1 + (i * 37) % 255)};
  }
  return v;
}

struct MaterialEntry {
  MaterialEntry(std::uint8_t id_, std::string name_, float friction_ = 0.5f, float restitution_ = 0.1f,
                float density_ = 1000.0f)
      : id(id_), name(std::move(name_)), friction(friction_), restitution(restitution_), density(density_) {}
  std::uint8_t id;
  std::string name;
  float friction, restitution, density;
};

std::vector<MaterialEntry> defaultEntries() {
  std::vector<MaterialEntry> out;
  const MaterialTable t = MaterialTable::defaults();
  for (int id = kFirstSolidMaterial; id < 256; ++id) {
    if (!t.contains(std::uint8_t(id))) continue;
    const Material& m = t[std::uint8_t(id)];
    out.push_back({std::uint8_t(id), m.name, m.friction, m.restitution, m.density});
  }
  return out;
}

// Header fields; the unset optionals are computed so that the file is valid apart from what a test changes.
struct Header {
  std::string magic = "VTPWORLD";
  std::uint32_t version = format::kVersion;
  std::optional<std::uint32_t> header_len;
  std::optional<std::uint64_t> file_len;
  std::optional<std::uint64_t> record_count;
  double voxel_size = 1.0;
  std::vector<MaterialEntry> materials = defaultEntries();
  std::optional<std::uint16_t> material_count;
  Bytes after_materials;  // bytes between the table and the CRC (none in a valid file)
  bool corrupt_crc = false;
};

// A valid header with one change, e.g. `with([](Header& h) { h.version = 2; })`.
template <class F>
Header with(F&& change) {
  Header h;
  change(h);
  return h;
}

Bytes buildFile(const Header& h, const std::vector<Bytes>& records) {
  Bytes b(h.magic.begin(), h.magic.end());
  put(b, h.version);
  put<std::uint32_t>(b, 0);
  put<std::uint64_t>(b, 0);
  put<std::uint64_t>(b, h.record_count.value_or(records.size()));
  put(b, h.voxel_size);
  put<std::uint16_t>(b, h.material_count.value_or(std::uint16_t(h.materials.size())));
  for (const MaterialEntry& m : h.materials) {
    b.push_back(m.id);
    b.push_back(std::uint8_t(m.name.size()));
    b.insert(b.end(), m.name.begin(), m.name.end());
    put(b, m.friction);
    put(b, m.restitution);
    put(b, m.density);
  }
  b.insert(b.end(), h.after_materials.begin(), h.after_materials.end());
  const std::size_t crc_at = b.size();
  put<std::uint32_t>(b, 0);
  for (const Bytes& r : records) b.insert(b.end(), r.begin(), r.end());
  poke<std::uint32_t>(b, 12, h.header_len.value_or(std::uint32_t(crc_at + 4)));
  poke<std::uint64_t>(b, 16, h.file_len.value_or(b.size()));
  poke<std::uint32_t>(b, crc_at, crcOf(std::span(b).first(crc_at)) ^ (h.corrupt_crc ? 1u : 0u));
  return b;
}

// Where each record of a well-formed file lies.
struct RecordSpan {
  std::size_t start, end;
  ChunkCoord coord;
};

std::vector<RecordSpan> recordSpans(const Bytes& file) {
  std::vector<RecordSpan> out;
  std::size_t at = peek<std::uint32_t>(file, 12);
  while (at < file.size()) {
    const ChunkCoord c{peek<std::int32_t>(file, at), peek<std::int32_t>(file, at + 4), peek<std::int32_t>(file, at + 8)};
    RecordSpan s{at, 0, c};
    const std::uint8_t kind = file[at + 12];
    REQUIRE((kind == format::kKindUniform || kind == format::kKindDeflate));
    s.end = kind == format::kKindUniform ? at + 19 : at + 21 + peek<std::uint32_t>(file, at + 13);
    REQUIRE(s.end <= file.size());
    out.push_back(s);
    at = s.end;
  }
  return out;
}

// --- Checks ---------------------------------------------------------------------------------------------------------

Result<LoadedWorld> decode(const Bytes& b, bool salvage = false) {
  LoadOptions o;
  o.salvage = salvage;
  return decodeWorld(b, o);
}

// The rejection every damaged file gets: kCorrupt, an offset inside the file, one line naming the byte.
bool isCleanRejection(const Result<LoadedWorld>& r, std::size_t file_size) {
  if (r.ok()) return false;
  const Error& e = r.error();
  return e.code == ErrorCode::kCorrupt && e.byte_offset.has_value() && *e.byte_offset <= file_size &&
         e.message.find("byte") != std::string::npos && e.message.find('\n') == std::string::npos;
}

// Rejected, in strict mode and in salvage mode unless `salvageable`, with a message containing `fragment`.
void checkRejected(const Bytes& file, const std::string& fragment, bool salvageable = false) {
  CAPTURE(fragment);
  const Result<LoadedWorld> r = decode(file);
  REQUIRE_FALSE(r.ok());
  CAPTURE(r.error().message);
  CHECK(isCleanRejection(r, file.size()));
  CHECK(r.error().message.find(fragment) != std::string::npos);
  const Result<LoadedWorld> s = decode(file, true);
  if (salvageable) {
    REQUIRE(s.ok());
    REQUIRE(s->bad_chunks.size() == 1);
    // A bad chunk's problem is the strict message without the "at record N" the strict load adds.
    CHECK(s->bad_chunks[0].problem.find(fragment.substr(0, fragment.find(" at record"))) != std::string::npos);
  } else {
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find(fragment) != std::string::npos);
  }
}

// Same voxel size, materials, chunk forms and every voxel of `box`, plus identical encodings.
void checkSameWorld(const World& a, const World& b, const VoxelBox& box) {
  CHECK(a.voxelSize() == b.voxelSize());
  CHECK(a.materials() == b.materials());
  const WorldStats sa = a.stats(), sb = b.stats();
  CHECK(sa.stored_chunks == sb.stored_chunks);
  CHECK(sa.uniform_chunks == sb.uniform_chunks);
  CHECK(sa.dense_chunks == sb.dense_chunks);
  CHECK(encodeWorld(a) == encodeWorld(b));
  const std::vector<Voxel> va = vtp::test::voxelsOneByOne(a, box);
  const std::vector<Voxel> vb = vtp::test::voxelsOneByOne(b, box);
  REQUIRE(va.size() == vb.size());
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < va.size(); ++i) mismatches += va[i] == vb[i] ? 0 : 1;
  CHECK(mismatches == 0);
}

bool sameVoxels(const Chunk& a, const Chunk& b) {
  std::array<Voxel, kChunkVolume> va, vb;
  a.copyTo(va);
  b.copyTo(vb);
  return va == vb;
}

std::unique_ptr<World> roundTrip(const World& w) {
  Result<LoadedWorld> r = decodeWorld(encodeWorld(w));
  REQUIRE(r.ok());
  CHECK(r->bad_chunks.empty());
  return std::move(r->world);
}

// Saves `world` to `file`, which must succeed, and checks that the file loads back the same world.
void saveAndReload(const World& world, const fs::path& file) {
  const vtp::Status s = saveWorldFile(world, file);
  CHECK_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
  Result<LoadedWorld> r = loadWorldFile(file);
  REQUIRE(r.ok());
  CHECK(encodeWorld(*r->world) == encodeWorld(world));
}

// Uniform chunks (a chunk-aligned box), dense ones (a sphere, water, noise) at negative coordinates: a small file.
std::unique_ptr<World> smallWorld() {
  auto w = vtp::test::makeWorld();
  REQUIRE(w->fillBox({{-16, -8, -16}, {0, 0, 0}}, 2).ok());
  REQUIRE(w->fillSphere({-3.3, 2.6, 4.1}, 4.5, 3).ok());
  REQUIRE(w->fillBox({{8, -8, -8}, {12, -3, 0}}, 1).ok());
  REQUIRE(w->setVoxel({-100, 50, 70}, {6, 9}).ok());
  // Noise compresses badly: a payload near compressBound(1024).
  std::mt19937_64 rng(3);
  std::vector<Voxel> noise(kChunkVolume);
  for (Voxel& v : noise) v = vtp::test::randomVoxel(rng);
  REQUIRE(w->writeRegion(chunkBox({-2, 3, -1}), noise).ok());
  return w;
}

using vtp::test::TempDir;

Bytes readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void writeFile(const fs::path& p, const Bytes& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  REQUIRE(out.good());
}

// Lowers the file-size limit (so a write fails with EFBIG, like a full disk) for its lifetime.
struct FileSizeLimit {
  rlimit old{};
  void (*old_handler)(int) = nullptr;
  explicit FileSizeLimit(rlim_t bytes) {
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    old_handler = ::signal(SIGXFSZ, SIG_IGN);
    rlimit lim = old;
    lim.rlim_cur = bytes;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &lim) == 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old);
    ::signal(SIGXFSZ, old_handler);
  }
};

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("WorldFile: worlds round-trip and save atomically and every damaged file is rejected with its own message") {
  SUBCASE("the test's hand-made encoder agrees with encodeWorld byte for byte") {
    auto w = vtp::test::makeWorld();
    const std::array<Voxel, kChunkVolume> mixed = mixedVoxels();
    REQUIRE(w->writeRegion(chunkBox({-1, 0, 2}), std::vector<Voxel>(mixed.begin(), mixed.end())).ok());
    REQUIRE(w->fillBox(chunkBox({3, -2, 0}), 4).ok());
    const Bytes hand = buildFile({}, {uniformRecord({3, -2, 0}, {4, 255}), denseRecord({-1, 0, 2}, mixed)});
    CHECK(hand == encodeWorld(*w));
    CHECK(buildFile({}, {}) == encodeWorld(*vtp::test::makeWorld()));
  }

  // --- Round trips -------------------------------------------------------------------------------------------------

  SUBCASE("random worlds at negative coordinates round-trip with identical bytes and voxels") {
    for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
      CAPTURE(seed);
      std::mt19937_64 rng(seed);
      auto w = vtp::test::makeWorld();
      const VoxelBox region{{-40, -24, -40}, {16, 16, 16}};
      vtp::test::randomEdits(*w, region, 30, rng);
      // Whole chunks of one value are stored uniform: rock, and water with a partial occupancy.
      REQUIRE(w->fillBox({{-64, -32, -64}, {-48, -24, -56}}, 2).ok());
      REQUIRE(w->writeRegion(chunkBox({5, 5, 5}), std::vector<Voxel>(kChunkVolume, Voxel{1, 99})).ok());
      const WorldStats st = w->stats();
      REQUIRE(st.uniform_chunks >= 3);
      REQUIRE(st.dense_chunks >= 10);
      auto back = roundTrip(*w);
      checkSameWorld(*w, *back, {{-72, -40, -72}, {32, 32, 32}});
    }
  }

  SUBCASE("a custom material table and voxel size survive a round trip") {
    WorldConfig config;
    config.voxel_size = 0.125;
    config.materials = MaterialTable();
    REQUIRE(config.materials.define(2, {"basalt", 0.91f, 0.25f, 2950.5f}).ok());
    REQUIRE(config.materials.define(77, {"ice_sheet", 0.015625f, 0.0f, 917.0f}).ok());
    REQUIRE(config.materials.define(255, {"un-obtainium_32_characters_long_", 1e6f, 1.0f, 1e-6f}).ok());
    auto w = vtp::test::makeWorld(config);
    REQUIRE(w->fillSphere({-7.5, -7.5, -7.5}, 6.0, 77).ok());
    REQUIRE(w->fillBox(chunkBox({-3, 0, 1}), 255).ok());
    REQUIRE(w->setVoxel({1, 2, 3}, {2, 1}).ok());
    auto back = roundTrip(*w);
    CHECK(back->voxelSize() == 0.125);
    REQUIRE(back->materials().contains(77));
    CHECK(back->materials()[77].name == "ice_sheet");
    CHECK(back->materials()[255].density == 1e-6f);
    CHECK_FALSE(back->materials().contains(3));  // the default table does not sneak back in
    checkSameWorld(*w, *back, {{-24, -24, -24}, {8, 8, 16}});
  }

  SUBCASE("encoding is deterministic: twice, after a reload, and for the same edits in another world") {
    std::mt19937_64 rng_a(7), rng_b(7);
    auto a = vtp::test::makeWorld();
    auto b = vtp::test::makeWorld();
    vtp::test::randomEdits(*a, {{-30, -30, -30}, {30, 30, 30}}, 25, rng_a);
    vtp::test::randomEdits(*b, {{-30, -30, -30}, {30, 30, 30}}, 25, rng_b);
    const Bytes first = encodeWorld(*a);
    CHECK(encodeWorld(*a) == first);
    CHECK(encodeWorld(*b) == first);
    CHECK(encodeWorld(*roundTrip(*a)) == first);
  }

  SUBCASE("saveWorldFile then loadWorldFile gives back the same world") {
    TempDir dir;
    std::mt19937_64 rng(11);
    auto w = vtp::test::makeWorld();
    vtp::test::randomEdits(*w, {{-20, -20, -20}, {20, 20, 20}}, 20, rng);
    const fs::path file = dir.path / "world.vtw";
    REQUIRE(saveWorldFile(*w, file).ok());
    CHECK(readFile(file) == encodeWorld(*w));
    Result<LoadedWorld> r = loadWorldFile(file);
    REQUIRE(r.ok());
    checkSameWorld(*w, *r->world, {{-28, -28, -28}, {28, 28, 28}});
    CHECK(dir.names() == std::vector<std::string>{"world.vtw"});  // no temp file left behind
  }

  SUBCASE("saving over an existing file replaces it") {
    TempDir dir;
    const fs::path file = dir.path / "world.vtw";
    auto a = smallWorld();
    auto b = vtp::test::makeWorld();
    REQUIRE(b->fillSphere({0, 0, 0}, 3, 5).ok());
    REQUIRE(saveWorldFile(*a, file).ok());
    REQUIRE(saveWorldFile(*b, file).ok());
    CHECK(readFile(file) == encodeWorld(*b));
    Result<LoadedWorld> r = loadWorldFile(file);
    REQUIRE(r.ok());
    CHECK(encodeWorld(*r->world) == encodeWorld(*b));
    CHECK(dir.names() == std::vector<std::string>{"world.vtw"});
  }

  SUBCASE("orphaned temp files next to the target are ignored and never loaded") {
    TempDir dir;
    const fs::path file = dir.path / "world.vtw";
    auto a = smallWorld();
    auto b = vtp::test::makeWorld();
    REQUIRE(b->fillBox({{0, 0, 0}, {8, 8, 8}}, 6).ok());
    // What a crash mid-save leaves: a complete newer temp file and a torn one.
    const Bytes newer = encodeWorld(*b);
    writeFile(dir.path / "world.vtw.tmp.4242.0", newer);
    writeFile(dir.path / "world.vtw.tmp.4242.1", Bytes(newer.begin(), newer.begin() + 50));
    // No target yet: the orphans are not a fallback.
    Result<LoadedWorld> none = loadWorldFile(file);
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().code == ErrorCode::kIo);
    REQUIRE(saveWorldFile(*a, file).ok());
    Result<LoadedWorld> r = loadWorldFile(file);
    REQUIRE(r.ok());
    CHECK(encodeWorld(*r->world) == encodeWorld(*a));
    CHECK(readFile(dir.path / "world.vtw.tmp.4242.0") == newer);  // untouched
  }

  SUBCASE("a save succeeds even when orphans hold the temp names this process would pick") {
    // A restarted server often gets the same pid (containers), so a temp name from its crashed predecessor may be
    // taken. White-box: temp files are named <target name>.tmp.<pid>.<n> beside it (the name cut to 200
    // bytes), with n counting saves in this process.
    TempDir dir;
    const fs::path file = dir.path / "world.vtw";
    for (int n = 0; n < 256; ++n) {
      writeFile(dir.path / ("world.vtw.tmp." + std::to_string(::getpid()) + "." + std::to_string(n)), Bytes{1, 2, 3});
    }
    saveAndReload(*smallWorld(), file);
    CHECK(dir.names().size() == 257);  // the orphans are neither loaded nor touched
  }

  SUBCASE("a target name of 254 bytes saves and loads (its temp name is cut to stay a legal name)") {
    TempDir dir;
    const fs::path file = dir.path / (std::string(250, 'a') + ".vtw");
    saveAndReload(*smallWorld(), file);
    CHECK(dir.names() == std::vector<std::string>{file.filename().string()});  // no temp file left
  }

  SUBCASE("saving into a missing directory fails with kIo and creates nothing") {
    TempDir dir;
    auto a = smallWorld();
    const vtp::Status s = saveWorldFile(*a, dir.path / "missing" / "world.vtw");
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == ErrorCode::kIo);
    CHECK(s.error().message.find("missing") != std::string::npos);
    CHECK_FALSE(fs::exists(dir.path / "missing"));
    CHECK(dir.names().empty());
  }

  SUBCASE("a save that fails mid-write leaves the previous file intact and no temp file") {
    TempDir dir;
    const fs::path file = dir.path / "world.vtw";
    auto a = vtp::test::makeWorld();
    REQUIRE(a->fillBox({{0, 0, 0}, {8, 8, 8}}, 2).ok());
    REQUIRE(saveWorldFile(*a, file).ok());
    const Bytes before = readFile(file);
    std::mt19937_64 rng(5);
    auto big = vtp::test::makeWorld();
    vtp::test::randomEdits(*big, {{-30, -30, -30}, {30, 30, 30}}, 20, rng);
    REQUIRE(encodeWorld(*big).size() > 4096);
    vtp::Status s;
    {
      const FileSizeLimit limit(4096);  // the write fails with EFBIG, as on a full disk
      s = saveWorldFile(*big, file);
    }
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == ErrorCode::kIo);
    CHECK(readFile(file) == before);
    CHECK(dir.names() == std::vector<std::string>{"world.vtw"});
    Result<LoadedWorld> r = loadWorldFile(file);
    REQUIRE(r.ok());
    CHECK(encodeWorld(*r->world) == before);
  }

  SUBCASE("a save over a directory is refused before the world is encoded, leaving it and no temp file") {
    TempDir dir;
    const fs::path target = dir.path / "world.vtw";
    fs::create_directories(target / "keep");
    const auto world = smallWorld();
    const std::size_t encoded = encodeWorld(*world).size();
    g_probe_largest = 0;
    g_probe_armed = true;
    const vtp::Status s = saveWorldFile(*world, target);
    g_probe_armed = false;
    CHECK(g_probe_largest.load() < encoded);  // no buffer the size of the file was made
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == ErrorCode::kIo);
    CHECK(fs::is_directory(target / "keep"));
    CHECK(dir.names() == std::vector<std::string>{"world.vtw"});
  }

  SUBCASE("loading a missing path or a directory fails with kIo; an oversized file is refused before reading") {
    TempDir dir;
    Result<LoadedWorld> missing = loadWorldFile(dir.path / "nope.vtw");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().code == ErrorCode::kIo);
    Result<LoadedWorld> directory = loadWorldFile(dir.path);
    REQUIRE_FALSE(directory.ok());
    CHECK(directory.error().code == ErrorCode::kIo);
    const fs::path file = dir.path / "w.vtw";
    REQUIRE(saveWorldFile(*smallWorld(), file).ok());
    LoadOptions tight;
    tight.max_file_bytes = 64;
    Result<LoadedWorld> big = loadWorldFile(file, tight);
    REQUIRE_FALSE(big.ok());
    CHECK(big.error().code == ErrorCode::kLimitExceeded);
    CHECK(big.error().message.find("load limit") != std::string::npos);
    Result<LoadedWorld> big_bytes = decodeWorld(readFile(file), tight);
    REQUIRE_FALSE(big_bytes.ok());
    CHECK(big_bytes.error().message.find("load limit") != std::string::npos);
  }

  // --- Damaged files -----------------------------------------------------------------------------------------------

  SUBCASE("every single-byte change at every offset is rejected, naming the byte") {
    const auto t0 = std::chrono::steady_clock::now();
    auto w = smallWorld();
    const Bytes file = encodeWorld(*w);
    const WorldStats st = w->stats();
    REQUIRE(st.uniform_chunks >= 3);
    REQUIRE(st.dense_chunks >= 5);
    REQUIRE(file.size() <= 64 * 1024);
    std::size_t failures = 0, checked = 0;
    Bytes damaged = file;
    for (std::size_t i = 0; i < file.size(); ++i) {
      // xor 0xFF and 0x01 everywhere, 0x80 and 0x5A on every third offset, all 255 changes on every 97th.
      for (int mask = 1; mask < 256; ++mask) {
        const bool everywhere = mask == 0xFF || mask == 0x01;
        const bool third = (mask == 0x80 || mask == 0x5A) && i % 3 == 0;
        if (!everywhere && !third && i % 97 != 0) continue;
        damaged[i] = std::uint8_t(file[i] ^ mask);
        ++checked;
        if (!isCleanRejection(decode(damaged), file.size())) {
          if (++failures <= 5) FAIL_CHECK("offset " << i << " xor " << int(mask) << " was not cleanly rejected");
        }
        damaged[i] = file[i];
      }
    }
    CHECK(failures == 0);
    MESSAGE("single-byte changes: " << checked << " files of " << file.size() << " bytes in " << secondsSince(t0)
                                    << " s");
  }

  SUBCASE("in salvage mode a damaged record costs that chunk only, or the load fails cleanly") {
    auto w = smallWorld();
    const Bytes file = encodeWorld(*w);
    const std::vector<RecordSpan> spans = recordSpans(file);
    Bytes damaged = file;
    std::size_t salvaged = 0;
    for (const RecordSpan& s : spans) {
      for (std::size_t i = s.start; i < s.end; ++i) {
        damaged[i] = std::uint8_t(file[i] ^ 0xFF);
        Result<LoadedWorld> r = decode(damaged, true);
        damaged[i] = file[i];
        if (!r.ok()) {
          CHECK(isCleanRejection(r, file.size()));
          continue;
        }
        ++salvaged;
        CAPTURE(i);
        REQUIRE(r->bad_chunks.size() == 1);
        CHECK(r->bad_chunks[0].byte_offset == s.start);
        // Every other chunk is exactly the original; the damaged one is air.
        const World::ReadGuard got_guard = r->world->read();
        const World::ReadGuard want_guard = w->read();
        for (const RecordSpan& other : spans) {
          const Chunk* got = r->world->chunk(got_guard, other.coord);
          if (other.start == s.start) {
            REQUIRE(got == nullptr);
            continue;
          }
          REQUIRE(got != nullptr);
          REQUIRE(sameVoxels(*got, *w->chunk(want_guard, other.coord)));
        }
      }
    }
    CHECK(salvaged > file.size() / 2);  // most damage lands in a checksummed body, not in the framing
  }

  SUBCASE("every truncation is rejected, in strict and in salvage mode") {
    const Bytes file = encodeWorld(*smallWorld());
    for (std::size_t len = 0; len < file.size(); ++len) {
      const Bytes cut(file.begin(), file.begin() + std::ptrdiff_t(len));
      CAPTURE(len);
      REQUIRE(isCleanRejection(decode(cut), cut.size()));
      REQUIRE(isCleanRejection(decode(cut, true), cut.size()));
    }
    const Result<LoadedWorld> r = decode(Bytes(file.begin(), file.end() - 1));
    CHECK(r.error().message.find("truncated") != std::string::npos);
  }

  SUBCASE("trailing bytes after the last record are rejected") {
    const Bytes file = encodeWorld(*smallWorld());
    for (std::size_t extra : {1u, 4u, 19u, 1000u}) {
      Bytes padded = file;
      padded.insert(padded.end(), extra, 0xA5);
      checkRejected(padded, "trailing bytes");
    }
    // Even with the header agreeing on the length: a record count that leaves a record unread.
    const std::vector<Bytes> two{uniformRecord({0, 0, 0}, {2, 255}), uniformRecord({1, 0, 0}, {2, 255})};
    checkRejected(buildFile(with([](Header& h) { h.record_count = 1; }), two),
                  "19 trailing bytes after the last record");
  }

  SUBCASE("a zero-filled tail is rejected, whether it replaces data or extends the file") {
    const Bytes file = encodeWorld(*smallWorld());
    const std::size_t header_len = peek<std::uint32_t>(file, 12);
    for (std::size_t keep : {header_len, header_len + 10, file.size() / 2, file.size() - 4, file.size() - 1}) {
      Bytes zeroed = file;
      std::fill(zeroed.begin() + std::ptrdiff_t(keep), zeroed.end(), 0);
      CAPTURE(keep);
      CHECK(isCleanRejection(decode(zeroed), zeroed.size()));
    }
    Bytes extended = file;
    extended.resize(file.size() + 4096, 0);
    checkRejected(extended, "trailing bytes");
    Bytes all_zero(file.size(), 0);
    checkRejected(all_zero, "bad magic");
  }

  // --- Decompression bombs -----------------------------------------------------------------------------------------

  SUBCASE("a record inflating to far more than 1024 bytes is rejected without a big allocation") {
    const Bytes zeros(1000000, 0);  // 991 bytes at level 9: under compressBound(1024) = 1037
    const Bytes bomb = zlibCompress(zeros, 9);
    REQUIRE(bomb.size() <= ::compressBound(format::kPayloadBytes));  // passes the length check, reaches inflate
    const Bytes file = buildFile({}, {uniformRecord({0, 0, 0}, {2, 255}), deflateRecord({1, 0, 0}, bomb)});
    g_probe_largest = 0;
    g_probe_armed = true;
    const Result<LoadedWorld> r = decode(file);
    const Result<LoadedWorld> s = decode(file, true);
    g_probe_armed = false;
    REQUIRE_FALSE(r.ok());
    CHECK(isCleanRejection(r, file.size()));
    CHECK(r.error().message.find("does not inflate to exactly 1024 bytes") != std::string::npos);
    REQUIRE(s.ok());
    REQUIRE(s->bad_chunks.size() == 1);
    CHECK(s->bad_chunks[0].coord == ChunkCoord{1, 0, 0});
    CHECK(g_probe_largest.load() < 64 * 1024);  // a 1 MiB inflate buffer would show here
    MESSAGE("bomb: " << bomb.size() << " payload bytes inflate to " << zeros.size() << "; largest allocation "
                     << g_probe_largest.load() << " bytes");
  }

  SUBCASE("a record inflating to fewer than 1024 bytes, or with bytes after its stream, is rejected") {
    const Bytes small = zlibCompress(Bytes(1023, 2));
    checkRejected(buildFile({}, {deflateRecord({0, 0, 0}, small)}), "does not inflate to exactly 1024 bytes", true);
    Bytes exact_then_junk = zlibCompress(rawPayload(mixedVoxels()));
    exact_then_junk.insert(exact_then_junk.end(), {1, 2, 3});
    checkRejected(buildFile({}, {deflateRecord({0, 0, 0}, exact_then_junk)}), "does not inflate to exactly", true);
    checkRejected(buildFile({}, {deflateRecord({0, 0, 0}, Bytes(200, 0x33))}), "does not inflate to exactly", true);
    checkRejected(buildFile({}, {deflateRecord({0, 0, 0}, Bytes{})}), "does not inflate to exactly", true);
  }

  SUBCASE("a payload length over compressBound(1024) is rejected before inflating or allocating") {
    const std::uint32_t bound = std::uint32_t(::compressBound(format::kPayloadBytes));
    const Bytes payload(bound + 1, 0);
    checkRejected(buildFile({}, {deflateRecord({0, 0, 0}, payload)}), "is over the bound for 1024 bytes");
    // A length claiming 4 GiB with the file ending right after it.
    g_probe_largest = 0;
    g_probe_armed = true;
    const Bytes huge = buildFile({}, {deflateRecord({0, 0, 0}, Bytes(8, 0), 0xFFFFFFFFu)});
    const Result<LoadedWorld> r = decode(huge);
    g_probe_armed = false;
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("payload length 4294967295 is over the bound") != std::string::npos);
    CHECK(g_probe_largest.load() < 64 * 1024);
  }

  // --- Content the checksums cannot catch: crafted files with valid CRCs --------------------------------------------

  SUBCASE("non-canonical voxels are rejected, each with its own message") {
    std::array<Voxel, kChunkVolume> v = mixedVoxels();
    v[5] = {0, 7};  // air with occupancy
    checkRejected(buildFile({}, {denseRecord({0, 0, 0}, v)}), "non-canonical voxel 5", true);
    v = mixedVoxels();
    v[300] = {3, 0};  // dirt with occupancy 0
    checkRejected(buildFile({}, {denseRecord({0, 0, 0}, v)}), "non-canonical voxel 300", true);
    checkRejected(buildFile({}, {uniformRecord({0, 0, 0}, {4, 0})}), "uniform record voxel is non-canonical", true);
    checkRejected(buildFile({}, {uniformRecord({0, 0, 0}, {0, 200})}), "uniform record voxel is non-canonical", true);
  }

  SUBCASE("a uniform air record and a dense record of 512 equal voxels are rejected as non-canonical") {
    checkRejected(buildFile({}, {uniformRecord({0, 0, 0}, kAir)}), "uniform record holds air", true);
    std::array<Voxel, kChunkVolume> same;
    same.fill({2, 255});
    checkRejected(buildFile({}, {denseRecord({0, 0, 0}, same)}), "dense record holds a uniform chunk", true);
    same.fill(kAir);
    checkRejected(buildFile({}, {denseRecord({0, 0, 0}, same)}), "dense record holds a uniform chunk", true);
  }

  SUBCASE("undefined material ids are rejected in uniform and dense records") {
    checkRejected(buildFile({}, {uniformRecord({0, 0, 0}, {7, 255})}), "undefined material 7", true);
    std::array<Voxel, kChunkVolume> v = mixedVoxels();
    v[511] = {200, 128};
    checkRejected(buildFile({}, {denseRecord({0, 0, 0}, v)}), "voxel 511 has undefined material 200", true);
    // Defined in this file's own table, so accepted.
    Header h;
    h.materials.push_back({200, "mithril"});
    const Result<LoadedWorld> ok = decode(buildFile(h, {denseRecord({0, 0, 0}, v)}));
    REQUIRE(ok.ok());
    CHECK(ok->world->voxel({7, 7, 7}) == Voxel{200, 128});
  }

  SUBCASE("duplicate and out-of-order chunk records are rejected") {
    const Bytes a = uniformRecord({0, 0, 0}, {2, 255});
    const Bytes b = uniformRecord({1, 0, 0}, {3, 255});
    const Bytes c = uniformRecord({0, 0, 1}, {4, 255});  // z sorts first: after b
    REQUIRE(decode(buildFile({}, {a, b, c})).ok());
    checkRejected(buildFile({}, {a, a}), "duplicate chunk at record 1", true);
    checkRejected(buildFile({}, {b, a}), "chunk records out of order at record 1", true);
    checkRejected(buildFile({}, {a, c, b}), "chunk records out of order at record 2", true);
  }

  SUBCASE("chunk coordinates beyond the storage limit are rejected; those at the limit load") {
    const Voxel rock{2, 255};
    for (ChunkCoord bad : {ChunkCoord{kMaxChunk + 1, 0, 0}, ChunkCoord{0, kMinChunk - 1, 0},
                           ChunkCoord{0, 0, std::numeric_limits<std::int32_t>::max()},
                           ChunkCoord{std::numeric_limits<std::int32_t>::min(), 0, 0}}) {
      CAPTURE(bad.x);
      CAPTURE(bad.y);
      CAPTURE(bad.z);
      checkRejected(buildFile({}, {uniformRecord(bad, rock)}), "chunk coordinate outside the storage range", true);
    }
    // The lowest chunk's first plane on an axis lies at -2^24, outside storage: only air may be there (a uniform
    // rock chunk there once loaded, with voxels that no edit could reach and `voxel()` never reads).
    std::array<Voxel, kChunkVolume> low{};
    for (int z = 0; z < kChunkSize; ++z) {
      for (int y = 0; y < kChunkSize; ++y) {
        for (int x = 0; x < kChunkSize; ++x) low[std::size_t(chunkIndex(x, y, z))] = x > 0 && y > 0 ? rock : kAir;
      }
    }
    const Result<LoadedWorld> edge = decode(buildFile({}, {denseRecord({kMinChunk, kMinChunk, 0}, low),
                                                           uniformRecord({kMaxChunk, kMaxChunk, kMaxChunk}, rock)}));
    REQUIRE(edge.ok());
    CHECK(edge->world->voxel({kStorageLimit - 1, kStorageLimit - 1, kStorageLimit - 1}) == rock);
    CHECK(edge->world->voxel({1 - kStorageLimit, 1 - kStorageLimit, 0}) == rock);
    checkRejected(buildFile({}, {uniformRecord({kMinChunk, 0, 0}, rock)}),
                  "uniform record fills voxels outside the storage range", true);
    checkRejected(buildFile({}, {uniformRecord({0, 0, kMinChunk}, rock)}),
                  "uniform record fills voxels outside the storage range", true);
    low[std::size_t(chunkIndex(3, 0, 5))] = rock;  // one voxel at y = -2^24
    checkRejected(buildFile({}, {denseRecord({kMinChunk, kMinChunk, 0}, low)}),
                  "voxel " + std::to_string(chunkIndex(3, 0, 5)) + " lies outside the storage range", true);
    low[std::size_t(chunkIndex(3, 0, 5))] = kAir;
    REQUIRE(decode(buildFile({}, {denseRecord({kMinChunk, kMinChunk, 0}, low)})).ok());
  }

  SUBCASE("bad magic, an unsupported version, a bad header length or checksum are rejected even in salvage mode") {
    const std::vector<Bytes> one{uniformRecord({0, 0, 0}, {2, 255})};
    checkRejected(buildFile(with([](Header& h) { h.magic = "VTPW0RLD"; }), one), "bad magic");
    checkRejected(buildFile(with([](Header& h) { h.version = 2; }), one), "unsupported format version 2");
    checkRejected(buildFile(with([](Header& h) { h.version = 0; }), one), "unsupported format version 0");
    checkRejected(buildFile(with([](Header& h) { h.header_len = 20; }), one), "header length 20 is impossible");
    checkRejected(buildFile(with([](Header& h) { h.header_len = 0xFFFFFFFFu; }), one),
                  "header length 4294967295 is impossible");
    checkRejected(buildFile(with([](Header& h) { h.corrupt_crc = true; }), one), "header checksum mismatch");
    checkRejected(buildFile(with([](Header& h) { h.file_len = 12345; }), one), "header says the file has 12345 bytes");
  }

  SUBCASE("an absurd or wrong record count is rejected") {
    const std::vector<Bytes> one{uniformRecord({0, 0, 0}, {2, 255})};
    checkRejected(buildFile(with([](Header& h) { h.record_count = std::uint64_t(1) << 60; }), one),
                  "cannot fit in the file");
    checkRejected(buildFile(with([](Header& h) { h.record_count = ~std::uint64_t(0); }), one),
                  "cannot fit in the file");
    checkRejected(buildFile(with([](Header& h) { h.record_count = 2; }), one), "cannot fit in the file");
    // A count that would fit if the records were uniform, but they are not.
    std::vector<Bytes> dense{denseRecord({0, 0, 0}, mixedVoxels())};
    checkRejected(buildFile(with([](Header& h) { h.record_count = 3; }), dense), "record is truncated");
    checkRejected(buildFile(with([](Header& h) { h.record_count = 0; }), one), "trailing bytes");
  }

  SUBCASE("an unknown record kind or a bad record checksum is rejected") {
    Bytes rec = uniformRecord({0, 0, 0}, {2, 255});
    rec[12] = 3;
    poke<std::uint32_t>(rec, rec.size() - 4, crcOf(std::span(rec).first(rec.size() - 4)));
    checkRejected(buildFile({}, {rec}), "unknown record kind 3");
    Bytes bad_crc = uniformRecord({0, 0, 0}, {2, 255});
    bad_crc.back() ^= 0x40;
    checkRejected(buildFile({}, {uniformRecord({-1, 0, 0}, {2, 255}), bad_crc}), "record checksum mismatch", true);
  }

  SUBCASE("material table errors are rejected, each with its own message") {
    auto table = [](std::vector<MaterialEntry> m) {
      Header h;
      h.materials = std::move(m);
      return h;
    };
    const std::vector<Bytes> none;
    checkRejected(buildFile(with([](Header& h) { h.material_count = 255; }), none), "material count 255 is over 254");
    checkRejected(buildFile(with([](Header& h) { h.material_count = 6; }), none),
                  "material table runs past the header");
    checkRejected(buildFile(with([](Header& h) { h.material_count = 4; }), none),
                  "header has unexplained bytes after the material table");
    checkRejected(buildFile(with([](Header& h) { h.after_materials = {0}; }), none),
                  "unexplained bytes after the material table");
    checkRejected(buildFile(table({{3, "a"}, {2, "b"}}), none), "material ids not strictly increasing (id 2)");
    checkRejected(buildFile(table({{3, "a"}, {3, "b"}}), none), "material ids not strictly increasing (id 3)");
    checkRejected(buildFile(table({{1, "wet"}}), none), "(id 1)");
    checkRejected(buildFile(table({{2, "Rock"}}), none), "must be 1-32 characters");
    checkRejected(buildFile(table({{2, ""}}), none), "must be 1-32 characters");
    checkRejected(buildFile(table({{2, std::string(33, 'a')}}), none), "must be 1-32 characters");
    checkRejected(buildFile(table({{2, "air"}}), none), "already used by id 0");
    checkRejected(buildFile(table({{2, "rock"}, {9, "rock"}}), none), "already used by id 2");
    const float nan = std::numeric_limits<float>::quiet_NaN();
    checkRejected(buildFile(table({{2, "rock", nan}}), none), "needs friction >= 0");
    checkRejected(buildFile(table({{2, "rock", 0.5f, 1.5f}}), none), "needs friction >= 0");
    checkRejected(buildFile(table({{2, "rock", 0.5f, 0.5f, 0.0f}}), none), "needs friction >= 0");
    checkRejected(buildFile(with([](Header& h) { h.voxel_size = std::nan(""); }), none), "voxel_size");
    checkRejected(buildFile(with([](Header& h) { h.voxel_size = 0.0; }), none), "voxel_size");
    checkRejected(buildFile(with([](Header& h) { h.voxel_size = 1e9; }), none), "voxel_size");
    const Result<LoadedWorld> empty_table = decode(buildFile(table({}), none));
    REQUIRE(empty_table.ok());
    CHECK(empty_table->world->materials().size() == 2);
  }

  SUBCASE("a material name with control bytes is quoted escaped, keeping the message on one line") {
    Header h;
    h.materials = {{2, "ro\nck\x01"}};
    checkRejected(buildFile(h, {}), "material name 'ro\\x0ack\\x01'");
  }

  // --- Salvage -------------------------------------------------------------------------------------------------------

  SUBCASE("salvage mode replaces two damaged records with air, lists them, and keeps the rest") {
    auto w = smallWorld();
    const Bytes file = encodeWorld(*w);
    const std::vector<RecordSpan> spans = recordSpans(file);
    REQUIRE(spans.size() >= 6);
    const RecordSpan& r1 = spans[1];
    const RecordSpan& r4 = spans[4];
    Bytes damaged = file;
    damaged[r1.end - 6] ^= 0x21;     // the uniform value or payload
    damaged[r4.start + 2] ^= 0x08;   // the coordinate itself
    const Result<LoadedWorld> strict = decode(damaged);
    REQUIRE_FALSE(strict.ok());
    CHECK(strict.error().byte_offset == r1.start);
    CHECK(strict.error().message.find("chunk record 1: byte") != std::string::npos);
    LoadOptions o;
    o.salvage = true;
    const Result<LoadedWorld> r = decodeWorld(damaged, o);
    REQUIRE(r.ok());
    REQUIRE(r->bad_chunks.size() == 2);
    CHECK(r->bad_chunks[0].coord == r1.coord);
    CHECK(r->bad_chunks[0].byte_offset == r1.start);
    CHECK(r->bad_chunks[0].problem.find("record checksum mismatch") != std::string::npos);
    ChunkCoord damaged_coord = r4.coord;
    damaged_coord.x ^= 0x080000;  // byte 2 of x, as stated in the damaged record
    CHECK(r->bad_chunks[1].coord == damaged_coord);
    CHECK(r->bad_chunks[1].byte_offset == r4.start);
    CHECK(r->world->stats().stored_chunks == spans.size() - 2);
    for (std::size_t i = 0; i < spans.size(); ++i) {
      const bool lost = i == 1 || i == 4;
      const std::vector<Voxel> got = vtp::test::voxelsOneByOne(*r->world, chunkBox(spans[i].coord));
      const std::vector<Voxel> want = lost ? std::vector<Voxel>(kChunkVolume, kAir)
                                           : vtp::test::voxelsOneByOne(*w, chunkBox(spans[i].coord));
      CHECK(got == want);
    }
  }

  SUBCASE("a damaged header or record framing still fails in salvage mode") {
    const Bytes file = encodeWorld(*smallWorld());
    LoadOptions o;
    o.salvage = true;
    const std::size_t header_len = peek<std::uint32_t>(file, 12);
    for (std::size_t i = 0; i < header_len; ++i) {
      Bytes damaged = file;
      damaged[i] ^= 0x10;
      CAPTURE(i);
      REQUIRE(isCleanRejection(decodeWorld(damaged, o), damaged.size()));
    }
    Bytes bad_kind = file;
    bad_kind[header_len + 12] = 9;
    const Result<LoadedWorld> r = decodeWorld(bad_kind, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("unknown record kind 9") != std::string::npos);
  }
}

TEST_CASE("WorldFile: loading a FIFO or a directory is refused at once") {
  const auto dir = std::filesystem::temp_directory_path() / ("vtp_special_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  SUBCASE("a FIFO is refused at once instead of waiting for a writer") {
    const auto fifo = dir / "pipe.vtw";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const auto start = std::chrono::steady_clock::now();
    auto loaded = loadWorldFile(fifo);
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().code == vtp::ErrorCode::kIo);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  }
  SUBCASE("a directory is refused") {
    auto loaded = loadWorldFile(dir);
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().code == vtp::ErrorCode::kIo);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("WorldFile memory: limits, running out, and what a save keeps") {
  SUBCASE("a world over max_memory_bytes is refused: by its record count at once, else as its records decode") {
    std::vector<Bytes> uniform;
    for (int i = 0; i < 100; ++i) uniform.push_back(uniformRecord({i, 0, 0}, {2, 255}));
    LoadOptions o;
    o.max_memory_bytes = 99 * kUniformChunkLoadBytes;
    g_probe_largest = 0;
    g_probe_armed = true;
    const Result<LoadedWorld> many = decodeWorld(buildFile({}, uniform), o);
    g_probe_armed = false;
    REQUIRE_FALSE(many.ok());
    CHECK(many.error().code == ErrorCode::kLimitExceeded);
    CHECK(many.error().message.find("100 chunks need more memory than the load limit") != std::string::npos);
    const std::size_t refused_largest = g_probe_largest.load();
    o.max_memory_bytes = 100 * kUniformChunkLoadBytes;
    g_probe_largest = 0;
    g_probe_armed = true;
    CHECK(decodeWorld(buildFile({}, uniform), o).ok());
    g_probe_armed = false;
    CHECK(refused_largest < g_probe_largest.load());  // refused from the header, before a world is made
    // Dense chunks cost more than the record count can tell: counted as they decode.
    std::vector<Bytes> dense;
    for (int i = 0; i < 10; ++i) dense.push_back(denseRecord({i, 0, 0}, mixedVoxels()));
    o.max_memory_bytes = 2 * kDenseChunkLoadBytes + kDenseChunkLoadBytes / 2;
    const Result<LoadedWorld> big = decodeWorld(buildFile({}, dense), o);
    REQUIRE_FALSE(big.ok());
    CHECK(big.error().code == ErrorCode::kLimitExceeded);
    CHECK(big.error().message.find("at record 2") != std::string::npos);
    o.max_memory_bytes = 10 * kDenseChunkLoadBytes;
    CHECK(decodeWorld(buildFile({}, dense), o).ok());
  }

  SUBCASE("salvage gives up past max_bad_chunks") {
    std::vector<Bytes> records;
    for (int i = 0; i < 6; ++i) {
      records.push_back(uniformRecord({i, 0, 0}, {2, 255}));
      if (i % 2 == 0) records.back().back() ^= 1;  // its checksum: 3 bad records
    }
    LoadOptions o;
    o.salvage = true;
    o.max_bad_chunks = 3;
    const Result<LoadedWorld> three = decodeWorld(buildFile({}, records), o);
    REQUIRE(three.ok());
    CHECK(three->bad_chunks.size() == 3);
    o.max_bad_chunks = 2;
    const Result<LoadedWorld> over = decodeWorld(buildFile({}, records), o);
    REQUIRE_FALSE(over.ok());
    CHECK(over.error().code == ErrorCode::kCorrupt);
    CHECK(over.error().message.find("more than 2 bad chunk records") != std::string::npos);
  }

  SUBCASE("loadWorldFile reads the header before it allocates the file") {
    TempDir dir;
    const fs::path zeros = dir.path / "zeros.vtw";
    { std::ofstream(zeros).flush(); }
    fs::resize_file(zeros, std::uintmax_t(64) << 20);  // 64 MiB of zeros, sparse
    g_probe_largest = 0;
    g_probe_armed = true;
    const Result<LoadedWorld> r = loadWorldFile(zeros);
    g_probe_armed = false;
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("bad magic") != std::string::npos);
    CHECK(g_probe_largest.load() <= format::kMaxHeaderBytes + 4096);
  }

  SUBCASE("running out of memory is kOutOfMemory, never an exception; a save that runs out keeps the old file") {
    std::mt19937_64 rng(11);
    auto w = vtp::test::makeWorld();
    vtp::test::randomEdits(*w, {{-40, -40, -40}, {40, 40, 40}}, 300, rng);
    const Bytes file = encodeWorld(*w);
    REQUIRE(file.size() > 64 * 1024);
    TempDir dir;
    const fs::path path = dir.path / "w.vtw";
    REQUIRE(saveWorldFile(*smallWorld(), path).ok());
    const Bytes before = readFile(path);
    {
      std::ofstream out(dir.path / "big.vtw", std::ios::binary);
      out.write(reinterpret_cast<const char*>(file.data()), std::streamsize(file.size()));
    }
    for (const std::size_t cap : {std::size_t(1) << 10, std::size_t(4) << 10, std::size_t(8) << 10}) {
      CAPTURE(cap);
      g_fail_above = cap;
      const Result<LoadedWorld> decoded = decodeWorld(file);
      const Result<LoadedWorld> loaded = loadWorldFile(dir.path / "big.vtw");
      const vtp::Status saved = saveWorldFile(*w, path);
      g_fail_above = std::size_t(-1);
      REQUIRE_FALSE(decoded.ok());
      CHECK(decoded.error().code == ErrorCode::kOutOfMemory);
      REQUIRE_FALSE(loaded.ok());
      CHECK(loaded.error().code == ErrorCode::kOutOfMemory);
      REQUIRE_FALSE(saved.ok());
      CHECK(saved.error().code == ErrorCode::kOutOfMemory);
      CHECK(readFile(path) == before);
      CHECK(dir.names() == std::vector<std::string>{"big.vtw", "w.vtw"});
    }
    CHECK(decodeWorld(file).ok());
    // zlib's own allocation (its ~7 KiB state; a one-call inflate needs no window) goes through operator new too:
    // running out there is kOutOfMemory, not a corrupt record that salvage would replace by air. The header's
    // allocations are below 4 KiB.
    const Bytes one_dense = buildFile({}, {denseRecord({0, 0, 0}, mixedVoxels())});
    g_fail_above = std::size_t(4) << 10;
    const Result<LoadedWorld> strict = decodeWorld(one_dense);
    const Result<LoadedWorld> salvaged = decode(one_dense, true);
    g_fail_above = std::size_t(-1);
    REQUIRE_FALSE(strict.ok());
    CHECK(strict.error().code == ErrorCode::kOutOfMemory);
    CHECK(strict.error().message.find("zlib") != std::string::npos);
    REQUIRE_FALSE(salvaged.ok());
    CHECK(salvaged.error().code == ErrorCode::kOutOfMemory);
    CHECK(decodeWorld(one_dense).ok());
  }

  SUBCASE("a save through a symbolic link replaces the file it names; a replaced file keeps its permissions") {
    TempDir dir;
    const fs::path real = dir.path / "real.vtw", link = dir.path / "link.vtw";
    REQUIRE(saveWorldFile(*smallWorld(), real).ok());
    fs::permissions(real, fs::perms::owner_read | fs::perms::owner_write);
    fs::create_symlink("real.vtw", link);
    auto other = vtp::test::makeWorld();
    REQUIRE(other->fillBox({{0, 0, 0}, {8, 8, 8}}, 3).ok());
    REQUIRE(saveWorldFile(*other, link).ok());
    CHECK(fs::is_symlink(fs::symlink_status(link)));
    CHECK(readFile(real) == encodeWorld(*other));
    CHECK((fs::status(real).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
    CHECK(dir.names() == std::vector<std::string>{"link.vtw", "real.vtw"});
  }
}
