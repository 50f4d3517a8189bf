#include "vtp/terrain/world.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "chunk_table.h"
#include "edit_apply.h"
#include "epoch_domain.h"

namespace vtp::terrain {

// Serialises edits; the sequence lets reads see the world between two edits.
struct World::EditState {
  std::mutex mutex;
  std::mutex notify_mutex;  // held while listeners run; taken before `mutex` is released
  std::atomic<std::uint64_t> publishing{0};  // odd while an edit publishes its chunks (see publishSequence)
};

// Boxes passed to readBox must stay this far inside int32 so chunk arithmetic cannot overflow. [Unit: voxel]
static constexpr std::int32_t kReadLimit = 1 << 29;

namespace {

// Copies 1..32 bytes with two fixed-size, possibly overlapping moves (the usual small-memcpy technique): plain loads
// and stores instead of a libc call, never touching a byte outside [dst, dst + bytes).
inline void copySmall(unsigned char* d, const unsigned char* s, std::size_t bytes) {
  auto pair = [&](auto word) {
    using W = decltype(word);
    W a, b;
    std::memcpy(&a, s, sizeof(W));
    std::memcpy(&b, s + bytes - sizeof(W), sizeof(W));
    std::memcpy(d, &a, sizeof(W));
    std::memcpy(d + bytes - sizeof(W), &b, sizeof(W));
  };
  struct W16 {
    unsigned char b[16];
  };
  if (bytes >= 16) {
    pair(W16{});
  } else if (bytes >= 8) {
    pair(std::uint64_t{});
  } else if (bytes >= 4) {
    pair(std::uint32_t{});
  } else if (bytes >= 2) {
    pair(std::uint16_t{});
  } else {
    *d = *s;
  }
}

// The boxes the mesher, masks and edge flags read: chunk `c` plus `kApron` voxels on every side, (8 + 2a)^3 voxels
// from the 3x3x3 chunks around c. Every source is a whole 8^3 array (a dense chunk's voxels, a shared air array for a
// missing chunk, or a stack array filled once per distinct uniform value), so every offset and length is a
// compile-time constant: the loops unroll into about 3 (8 + 2a)^2 fixed-size moves with no loop control. Returns false
// (nothing meaningful written) when more distinct uniform values appear than the stack arrays hold; the caller then
// takes the general path.
alignas(32) constexpr Voxel kAirChunk[kChunkVolume] = {};
constexpr int kUniformPatterns = 4;

// 512 voxels of one value, as 64-bit words: filled word by word, which the compiler vectorises (a Voxel-wise fill
// is not).
struct UniformPattern {
  alignas(32) std::uint64_t words[kChunkVolume * sizeof(Voxel) / sizeof(std::uint64_t)];
  void fill(Voxel value) {
    std::uint16_t v16;
    std::memcpy(&v16, &value, sizeof v16);
    const std::uint64_t word = 0x0001000100010001ull * v16;
    for (std::uint64_t& w : words) w = word;
  }
};

template <int kApron>
bool readApronBox(const ChunkTable::Table& table, ChunkCoord c, Voxel* out) {
  constexpr int kSide = kChunkSize + 2 * kApron;
  constexpr int kStart[3] = {kChunkSize - kApron, 0, 0};  // first voxel read in the low, middle, high chunk
  constexpr int kLen[3] = {kApron, kChunkSize, kApron};
  constexpr int kDst[3] = {0, kApron, kApron + kChunkSize};
  UniformPattern patterns[kUniformPatterns];
  Voxel pattern_value[kUniformPatterns];
  int pattern_count = 0;
  const Voxel* src[27];
  std::uint64_t hx[3], hy[3], hz[3];
  for (int d = 0; d < 3; ++d) {
    hx[d] = chunkHashPart<0>(c.x + d - 1);
    hy[d] = chunkHashPart<1>(c.y + d - 1);
    hz[d] = chunkHashPart<2>(c.z + d - 1);
  }
  const ChunkTable::Slot* slots = table.slots.get();
  const std::size_t mask = table.mask;
  for (int n = 0, k = 0; k < 3; ++k) for (int j = 0; j < 3; ++j) for (int i = 0; i < 3; ++i, ++n) {
    const ChunkCoord key{c.x + i - 1, c.y + j - 1, c.z + k - 1};
    const ChunkTable::Slot* slot = ChunkTable::find(slots, mask, key, std::size_t(chunkHashMix(hx[i] ^ hy[j] ^ hz[k])));
    const Chunk* chunk = slot ? slot->chunk.load(std::memory_order_seq_cst) : nullptr;
    if (chunk && !chunk->isUniform()) {
      src[n] = chunk->dense().data();
      continue;
    }
    const Voxel value = chunk ? chunk->uniformValue() : kAir;
    if (value == kAir) {
      src[n] = kAirChunk;
      continue;
    }
    int p = 0;
    while (p < pattern_count && !(pattern_value[p] == value)) ++p;
    if (p == pattern_count) {
      if (pattern_count == kUniformPatterns) return false;
      patterns[p].fill(value);
      pattern_value[p] = value;
      ++pattern_count;
    }
    src[n] = reinterpret_cast<const Voxel*>(patterns[p].words);
  }
  auto* dst = reinterpret_cast<unsigned char*>(out);
  // Byte pointers and a local copy of src: stores through `dst` cannot then force reloads of the source table.
  const unsigned char* s[27];
  for (int n = 0; n < 27; ++n) s[n] = reinterpret_cast<const unsigned char*>(src[n]);
  constexpr std::size_t kV = sizeof(Voxel);
#pragma GCC unroll 4
  for (int k = 0; k < 3; ++k) {
#pragma GCC unroll 8
    for (int z = 0; z < kLen[k]; ++z) {
#pragma GCC unroll 4
      for (int j = 0; j < 3; ++j) {
#pragma GCC unroll 8
        for (int y = 0; y < kLen[j]; ++y) {
          const int n = 3 * (j + 3 * k);
          const std::size_t from = kV * std::size_t(chunkIndex(0, kStart[j] + y, kStart[k] + z));
          unsigned char* row = dst + kV * std::size_t((kDst[j] + y) * kSide + (kDst[k] + z) * kSide * kSide);
          std::memcpy(row, s[n] + from + kV * kStart[0], kV * kApron);
          std::memcpy(row + kV * kApron, s[n + 1] + from, kV * kChunkSize);
          std::memcpy(row + kV * (kApron + kChunkSize), s[n + 2] + from, kV * kApron);
        }
      }
    }
  }
  return true;
}

}  // namespace

// --- Guards and snapshots --------------------------------------------------------------------------------------------

World::ReadGuard::ReadGuard(const EpochDomain* domain) : m_domain(domain), m_slot(domain->pin()) {}
World::ReadGuard::ReadGuard(ReadGuard&& other) noexcept
    : m_domain(std::exchange(other.m_domain, nullptr)), m_slot(other.m_slot) {}
World::ReadGuard::~ReadGuard() {
  if (m_domain) m_domain->unpin(m_slot);
}

WorldSnapshot::WorldSnapshot(const EpochDomain* domain, std::size_t slot, std::vector<Entry> entries)
    : m_domain(domain), m_slot(slot), m_entries(std::move(entries)) {}
WorldSnapshot::WorldSnapshot(WorldSnapshot&& other) noexcept
    : m_domain(std::exchange(other.m_domain, nullptr)), m_slot(other.m_slot), m_entries(std::move(other.m_entries)) {}
WorldSnapshot::~WorldSnapshot() {
  if (m_domain) m_domain->unpin(m_slot);
}

// --- Creation --------------------------------------------------------------------------------------------------------

Status validateConfig(const WorldConfig& config) {
  if (!std::isfinite(config.voxel_size) || config.voxel_size < 1e-3 || config.voxel_size > 1e3) {
    return Error{ErrorCode::kInvalidArgument, "voxel_size must be finite and in [0.001, 1000]", {}};
  }
  const EditLimits& l = config.limits;
  if (!std::isfinite(l.max_radius) || l.max_radius <= 0 || l.max_radius > 4096 || l.max_edit_voxels <= 0 ||
      l.max_edit_voxels > (std::int64_t(1) << 32) || l.max_batch_voxels < l.max_edit_voxels ||
      l.max_batch_voxels > (std::int64_t(1) << 34) || l.max_edit_chunks <= 0 ||
      l.max_edit_chunks > (std::int64_t(1) << 32) || l.max_batch_chunks < l.max_edit_chunks ||
      l.max_batch_chunks > (std::int64_t(1) << 34)) {
    return Error{ErrorCode::kInvalidArgument,
                 "edit limits must satisfy 0 < max_radius <= 4096, 0 < max_edit_voxels <= 2^32, "
                 "max_edit_voxels <= max_batch_voxels <= 2^34, and the same for max_edit_chunks and max_batch_chunks",
                 {}};
  }
  return {};
}

Result<std::unique_ptr<World>> World::createChecked(WorldConfig config) {
  if (Status s = validateConfig(config); !s) return s.error();
  return std::unique_ptr<World>(new World(std::move(config)));
}

World::World(WorldConfig config)
    : m_config(std::move(config)),
      m_epochs(std::make_unique<EpochDomain>()),
      m_table(std::make_unique<ChunkTable>(*m_epochs)),
      m_listeners(std::make_shared<ListenerRegistry<std::span<const ChangeEvent>>>()),
      m_edit(std::make_unique<EditState>()) {}

World::~World() {
  // Retired versions go first (their reclaim needs the domain), then the live table with its chunks.
  m_table.reset();
  m_epochs.reset();
}

// --- Reads -----------------------------------------------------------------------------------------------------------

World::ReadGuard World::read() const { return ReadGuard(m_epochs.get()); }

Voxel World::voxel(VoxelCoord v) const {
  ReadGuard guard = read();
  const ChunkCoord c = chunkOf(v);
  const Chunk* chunk = m_table->findChunk(c);
  if (!chunk) return kAir;
  const VoxelCoord o = chunkOrigin(c);
  return chunk->at(v.x - o.x, v.y - o.y, v.z - o.z);
}

Status World::readBox(const VoxelBox& box, std::span<Voxel> out) const {
  if (box.empty()) return Error{ErrorCode::kInvalidArgument, "readBox: empty box", {}};
  if (box.min.x < -kReadLimit || box.min.y < -kReadLimit || box.min.z < -kReadLimit || box.max.x > kReadLimit ||
      box.max.y > kReadLimit || box.max.z > kReadLimit) {
    return Error{ErrorCode::kOutOfRange, "readBox: box must lie within |v| <= 2^29", {}};
  }
  if (box.volume() > kMaxReadVoxels || chunkCount(box) > kMaxReadChunks) {
    return Error{ErrorCode::kLimitExceeded,
                 "readBox: box holds more than 2^24 voxels or overlaps more than 2^16 chunks", {}};
  }
  if (std::int64_t(out.size()) != box.volume()) {
    return Error{ErrorCode::kInvalidArgument, "readBox: output size does not match the box volume", {}};
  }
  ReadGuard guard = read();
  const ChunkTable::Table& table = m_table->current();
  // The hot path: a chunk with a 1- or 2-voxel apron (the 10^3 and 12^3 boxes).
  const ChunkCoord centre = chunkOf({box.min.x + 2, box.min.y + 2, box.min.z + 2});
  for (const int apron : {1, 2}) {
    if (box == grown(chunkBox(centre), apron)) {
      if (apron == 1 ? readApronBox<1>(table, centre, out.data()) : readApronBox<2>(table, centre, out.data())) {
        return {};
      }
      break;
    }
  }
  // Any other box: one row of chunks along x at a time; each chunk gives every output row one segment of 1..8
  // voxels, moved with fixed-size loads and stores (copySmall). A uniform (or missing) chunk reads an 8-voxel
  // pattern with zero strides, so dense and uniform chunks share the inner loop.
  const std::size_t sx = std::size_t(box.max.x - box.min.x);
  const std::size_t sxy = sx * std::size_t(box.max.y - box.min.y);
  const ChunkCoord lo = chunkOf(box.min), hi = chunkOf({box.max.x - 1, box.max.y - 1, box.max.z - 1});
  struct Segment {
    const unsigned char* src;
    std::size_t y_stride, z_stride, bytes, dst;  // [Unit: byte]
    Voxel pattern[kChunkSize];
  };
  // Boxes up to 8 chunks wide (64+ voxels) keep their segments on the stack: no allocation on the read path.
  const std::size_t chunks_x = std::size_t(hi.x - lo.x + 1);
  Segment stack_segments[8];
  std::vector<Segment> heap_segments(chunks_x > std::size(stack_segments) ? chunks_x : 0);
  const std::span<Segment> segments = heap_segments.empty() ? std::span<Segment>(stack_segments, chunks_x)
                                                            : std::span<Segment>(heap_segments);
  const std::size_t row_step = sx * sizeof(Voxel), plane_step = sxy * sizeof(Voxel);
  for (std::int32_t cz = lo.z; cz <= hi.z; ++cz) {
    const std::int32_t z0 = std::max(box.min.z, cz * kChunkSize), z1 = std::min(box.max.z, cz * kChunkSize + kChunkSize);
    for (std::int32_t cy = lo.y; cy <= hi.y; ++cy) {
      const std::int32_t y0 = std::max(box.min.y, cy * kChunkSize), y1 = std::min(box.max.y, cy * kChunkSize + kChunkSize);
      for (std::int32_t cx = lo.x; cx <= hi.x; ++cx) {
        Segment& seg = segments[std::size_t(cx - lo.x)];
        const std::int32_t x0 = std::max(box.min.x, cx * kChunkSize), x1 = std::min(box.max.x, cx * kChunkSize + kChunkSize);
        const ChunkTable::Slot* slot = ChunkTable::find(table, {cx, cy, cz});
        const Chunk* chunk = slot ? slot->chunk.load(std::memory_order_seq_cst) : nullptr;
        seg.bytes = std::size_t(x1 - x0) * sizeof(Voxel);
        seg.dst = std::size_t(x0 - box.min.x) * sizeof(Voxel);
        if (chunk && !chunk->isUniform()) {
          seg.src = reinterpret_cast<const unsigned char*>(
              chunk->dense().data() + chunkIndex(x0 - cx * kChunkSize, y0 - cy * kChunkSize, z0 - cz * kChunkSize));
          seg.y_stride = kChunkSize * sizeof(Voxel);
          seg.z_stride = kChunkSize * kChunkSize * sizeof(Voxel);
        } else {
          std::fill_n(seg.pattern, kChunkSize, chunk ? chunk->uniformValue() : kAir);
          seg.src = reinterpret_cast<const unsigned char*>(seg.pattern);
          seg.y_stride = seg.z_stride = 0;
        }
      }
      auto* plane = reinterpret_cast<unsigned char*>(out.data() + sx * std::size_t(y0 - box.min.y) +
                                                     sxy * std::size_t(z0 - box.min.z));
      for (std::int32_t z = 0; z < z1 - z0; ++z, plane += plane_step) {
        unsigned char* row = plane;
        for (std::int32_t y = 0; y < y1 - y0; ++y, row += row_step) {
          for (const Segment& seg : segments) {
            copySmall(row + seg.dst, seg.src + std::size_t(y) * seg.y_stride + std::size_t(z) * seg.z_stride, seg.bytes);
          }
        }
      }
    }
  }
  return {};
}

const Chunk* World::chunk(const ReadGuard&, ChunkCoord c) const { return m_table->findChunk(c); }

std::uint64_t World::publishSequence() const { return m_edit->publishing.load(std::memory_order_seq_cst); }

std::uint64_t World::chunkVersion(ChunkCoord c) const {
  ReadGuard guard = read();
  const ChunkTable::Slot* slot = ChunkTable::find(m_table->current(), c);
  return slot ? slot->version.load(std::memory_order_seq_cst) : 0;
}

void World::forEachChunk(const ReadGuard&, const std::function<void(ChunkCoord, const Chunk&)>& fn) const {
  const ChunkTable::Table& table = m_table->current();
  for (std::size_t i = 0; i <= table.mask; ++i) {
    const ChunkTable::Slot& s = table.slots[i];
    if (s.used.load(std::memory_order_acquire) == 0) continue;
    if (const Chunk* c = s.chunk.load(std::memory_order_seq_cst)) fn(s.key, *c);
  }
}

namespace {

// Runs `read` (which may run again) until one run lies between two edits: `publishing` even and unchanged across it.
// At most `tries` runs (a negative count: no limit); false when none was clean.
template <class Read>
bool readBetweenEdits(const std::atomic<std::uint64_t>& publishing, int tries, Read&& read) {
  for (int run = 0; tries < 0 || run < tries;) {
    const std::uint64_t before = publishing.load(std::memory_order_seq_cst);
    if (before & 1) {
      std::this_thread::yield();  // an edit is publishing: a read now would be retried anyway
      continue;
    }
    if (tries >= 0) ++run;
    if (!read()) return true;  // the read failed on its own terms: no retry makes it succeed
    if (publishing.load(std::memory_order_seq_cst) == before) return true;
  }
  return false;
}

}  // namespace

Status World::readBoxBetweenEdits(const VoxelBox& box, std::span<Voxel> out) const {
  Status status;
  readBetweenEdits(m_edit->publishing, -1, [&] { return (status = readBox(box, out)).ok(); });
  return status;
}

WorldSnapshot World::snapshot() const {
  std::vector<WorldSnapshot::Entry> entries;
  ReadGuard guard = read();
  auto walk = [&] {
    entries.clear();
    forEachChunk(guard, [&](ChunkCoord c, const Chunk& chunk) { entries.push_back({c, &chunk}); });
    return true;
  };
  // Not the edit lock first: a listener snapshots (saving does) while another editor may hold that lock, waiting
  // for the notify lock the listener's edit holds. While a listener runs, at most that one edit can publish, so the
  // second try is clean and only snapshots outside listeners, under a stream of edits, reach the lock.
  if (!readBetweenEdits(m_edit->publishing, 3, walk)) {
    std::lock_guard lock(m_edit->mutex);
    walk();
  }
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.coord < b.coord; });
  // The snapshot takes over the guard's pin: the versions it lists stay alive as long as it does.
  const std::size_t slot = guard.m_slot;
  guard.m_domain = nullptr;
  return WorldSnapshot(m_epochs.get(), slot, std::move(entries));
}

WorldStats World::stats() const {
  WorldStats s;
  ReadGuard guard = read();
  forEachChunk(guard, [&](ChunkCoord, const Chunk& c) {
    ++s.stored_chunks;
    ++(c.isUniform() ? s.uniform_chunks : s.dense_chunks);
    s.chunk_bytes += c.memoryBytes();
  });
  s.table_bytes = m_table->tableBytes();
  return s;
}

// --- Edits -----------------------------------------------------------------------------------------------------------

Result<EditResult> World::apply(const EditCommand& edit) { return apply(std::span<const EditCommand>(&edit, 1)); }

Result<EditResult> World::apply(std::span<const EditCommand> batch) {
  std::unique_lock lock(m_edit->mutex);
  // Validate and stage the batch, then commit it in three steps so that nothing can fail once the first chunk is
  // published: create every slot (growing the table changes no content), build every new version, reserve the
  // retire list; then publish. Running out of memory before the publish changes nothing.
  EditResult result;
  std::vector<ChangeEvent> events;
  std::vector<std::unique_ptr<const Chunk>> versions;
  std::vector<ChunkTable::Slot*> slots;
  try {
    BatchTotals totals(m_config.limits, batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
      Result<VoxelBox> box = validateEdit(batch[i], m_config);
      if (!box) {
        if (batch.size() == 1) return box.error();
        Error e = box.error();
        e.message = "edit " + std::to_string(i) + ": " + e.message;
        return e;
      }
      if (Status s = totals.add(*box); !s) return s.error();
    }
    // The editor is the only thread that retires chunks, so the versions it reads here stay alive without a pin.
    EditStaging staging([this](ChunkCoord c) { return m_table->findChunk(c); });
    for (std::size_t i = 0; i < batch.size(); ++i) staging.apply(batch[i], totals.boxes()[i]);
    std::vector<std::pair<ChunkCoord, const EditStaging::Staged*>> changed;
    std::vector<VoxelBox> diffs;
    for (const auto& [c, staged] : staging.sorted()) {
      const VoxelBox diff = EditStaging::diffBox(c, *staged);
      if (diff.empty()) continue;
      changed.emplace_back(c, staged);
      diffs.push_back(diff);
      m_table->slotFor(c);
    }
    for (std::size_t i = 0; i < changed.size(); ++i) {
      const auto& [c, staged] = changed[i];
      ChunkTable::Slot& slot = m_table->slotFor(c);  // exists now: no growth, the reference stays valid
      const std::uint64_t version = slot.version.load(std::memory_order_relaxed) + 1;
      std::unique_ptr<const Chunk> next = Chunk::make(version, staged->voxels);
      if (next->isUniform() && next->uniformValue() == kAir) next.reset();  // missing chunks are air
      versions.push_back(std::move(next));
      slots.push_back(&slot);
      events.push_back({c, version, diffs[i]});
      result.chunks.push_back(c);
      result.changed = unite(result.changed, diffs[i]);
    }
    m_epochs->reserve(slots.size());
  } catch (const std::bad_alloc&) {
    return Error{ErrorCode::kOutOfMemory, "out of memory staging the edit; nothing changed", {}};
  }
  m_edit->publishing.fetch_add(1, std::memory_order_seq_cst);  // odd: chunks of this edit are being published
  for (std::size_t i = 0; i < slots.size(); ++i) m_table->publish(*slots[i], std::move(versions[i]));
  m_edit->publishing.fetch_add(1, std::memory_order_seq_cst);
  m_epochs->advanceAndReclaim();

  // Listeners run after the edit lock is released (so they may read, snapshot or save), under a notify lock taken
  // first so events still arrive in edit order.
  std::unique_lock notify_lock(m_edit->notify_mutex);
  lock.unlock();
  if (!events.empty()) m_listeners->notify(events);
  return result;
}

// An integer box as a shape: with integer corners it covers exactly its voxels, fully (edit.h).
static BoxShape boxShape(const VoxelBox& box) {
  return {{double(box.min.x), double(box.min.y), double(box.min.z)},
          {double(box.max.x), double(box.max.y), double(box.max.z)}};
}

Result<EditResult> World::fillBox(const VoxelBox& box, std::uint8_t material) {
  return apply(ShapeEdit{boxShape(box), EditOp::kFill, material});
}
Result<EditResult> World::clearBox(const VoxelBox& box) {
  return apply(ShapeEdit{boxShape(box), EditOp::kClear, kAirMaterial});
}
Result<EditResult> World::fillSphere(Vec3d center, double radius, std::uint8_t material) {
  return apply(ShapeEdit{SphereShape{center, radius}, EditOp::kFill, material});
}
Result<EditResult> World::clearSphere(Vec3d center, double radius) {
  return apply(ShapeEdit{SphereShape{center, radius}, EditOp::kClear, kAirMaterial});
}
Result<EditResult> World::paintSphere(Vec3d center, double radius, std::uint8_t material) {
  return apply(ShapeEdit{SphereShape{center, radius}, EditOp::kPaint, material});
}
Result<EditResult> World::fillCylinder(Vec3d center, double radius, double height, std::uint8_t material) {
  return apply(ShapeEdit{CylinderShape{center, radius, height}, EditOp::kFill, material});
}
Result<EditResult> World::clearCylinder(Vec3d center, double radius, double height) {
  return apply(ShapeEdit{CylinderShape{center, radius, height}, EditOp::kClear, kAirMaterial});
}
Result<EditResult> World::replace(const VoxelBox& box, std::uint8_t from, std::uint8_t to) {
  return apply(ReplaceEdit{box, from, to});
}
Result<EditResult> World::setVoxel(VoxelCoord at, Voxel value) { return apply(SetVoxelEdit{at, value}); }
Result<EditResult> World::writeRegion(const VoxelBox& box, std::span<const Voxel> voxels) {
  return apply(WriteRegionEdit{box, std::vector<Voxel>(voxels.begin(), voxels.end())});
}

Subscription World::subscribe(ChangeListener listener) {
  return m_listeners->subscribe(std::move(listener));
}

}  // namespace vtp::terrain
