#include "vtp/terrain/world.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>

#include "chunk_table.h"
#include "edit_apply.h"
#include "epoch_domain.h"
#include "listener_registry.h"

namespace vtp::terrain {

// Serialises edits; the mutex also makes snapshot() see the world between two edits.
struct World::EditState {
  std::mutex mutex;
};

// Boxes passed to readBox must stay this far inside int32 so chunk arithmetic cannot overflow. [Unit: voxel]
static constexpr std::int32_t kReadLimit = 1 << 30;

// --- Subscription ----------------------------------------------------------------------------------------------------

Subscription::Subscription(std::weak_ptr<ListenerRegistry> registry, std::uint64_t id)
    : m_registry(std::move(registry)), m_id(id) {}
Subscription::Subscription(Subscription&& other) noexcept
    : m_registry(std::move(other.m_registry)), m_id(std::exchange(other.m_id, 0)) {}
Subscription& Subscription::operator=(Subscription&& other) noexcept {
  if (this != &other) {
    reset();
    m_registry = std::move(other.m_registry);
    m_id = std::exchange(other.m_id, 0);
  }
  return *this;
}
Subscription::~Subscription() { reset(); }
void Subscription::reset() {
  if (auto registry = m_registry.lock(); registry && m_id != 0) registry->remove(m_id);
  m_registry.reset();
  m_id = 0;
}

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
      l.max_batch_voxels > (std::int64_t(1) << 34)) {
    return Error{ErrorCode::kInvalidArgument,
                 "edit limits must satisfy 0 < max_radius <= 4096, 0 < max_edit_voxels <= 2^32, "
                 "max_edit_voxels <= max_batch_voxels <= 2^34",
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
      m_listeners(std::make_shared<ListenerRegistry>()),
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
    return Error{ErrorCode::kOutOfRange, "readBox: box must lie within |v| <= 2^30", {}};
  }
  if (box.volume() > m_config.limits.max_edit_voxels) {
    return Error{ErrorCode::kLimitExceeded, "readBox: box holds more voxels than max_edit_voxels", {}};
  }
  if (std::int64_t(out.size()) != box.volume()) {
    return Error{ErrorCode::kInvalidArgument, "readBox: output size does not match the box volume", {}};
  }
  ReadGuard guard = read();
  const ChunkTable::Table& table = m_table->current();
  const std::size_t sx = std::size_t(box.max.x - box.min.x), sy = std::size_t(box.max.y - box.min.y);
  const ChunkCoord lo = chunkOf(box.min), hi = chunkOf({box.max.x - 1, box.max.y - 1, box.max.z - 1});
  for (std::int32_t cz = lo.z; cz <= hi.z; ++cz) {
    for (std::int32_t cy = lo.y; cy <= hi.y; ++cy) {
      for (std::int32_t cx = lo.x; cx <= hi.x; ++cx) {
        const ChunkCoord c{cx, cy, cz};
        const ChunkTable::Slot* slot = ChunkTable::find(table, c);
        const Chunk* chunk = slot ? slot->chunk.load(std::memory_order_seq_cst) : nullptr;
        const VoxelBox sub = intersect(box, chunkBox(c));
        const VoxelCoord o = chunkOrigin(c);
        const std::size_t row = std::size_t(sub.max.x - sub.min.x);
        // Whole rows at a time: a row of one chunk is contiguous in both layouts.
        for (std::int32_t z = sub.min.z; z < sub.max.z; ++z) {
          for (std::int32_t y = sub.min.y; y < sub.max.y; ++y) {
            Voxel* dst = out.data() + (std::size_t(sub.min.x - box.min.x) +
                                       sx * (std::size_t(y - box.min.y) + sy * std::size_t(z - box.min.z)));
            if (chunk && !chunk->isUniform()) {
              const Voxel* src = chunk->dense().data() + chunkIndex(sub.min.x - o.x, y - o.y, z - o.z);
              std::copy_n(src, row, dst);
            } else {
              std::fill_n(dst, row, chunk ? chunk->uniformValue() : kAir);
            }
          }
        }
      }
    }
  }
  return {};
}

const Chunk* World::chunk(const ReadGuard&, ChunkCoord c) const { return m_table->findChunk(c); }

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

WorldSnapshot World::snapshot() const {
  std::vector<WorldSnapshot::Entry> entries;
  std::lock_guard lock(m_edit->mutex);
  const std::size_t slot = m_epochs->pin();
  forEachChunk(ReadGuard(m_epochs.get()), [&](ChunkCoord c, const Chunk& chunk) { entries.push_back({c, &chunk}); });
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.coord < b.coord; });
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
  std::lock_guard lock(m_edit->mutex);
  std::vector<VoxelBox> touched;
  touched.reserve(batch.size());
  std::int64_t total = 0;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    Result<VoxelBox> box = validateEdit(batch[i], m_config);
    if (!box) {
      if (batch.size() == 1) return box.error();
      Error e = box.error();
      e.message = "edit " + std::to_string(i) + ": " + e.message;
      return e;
    }
    total += box->volume();
    if (total > m_config.limits.max_batch_voxels) {
      return Error{ErrorCode::kLimitExceeded,
                   "batch touches more than the cap of " + std::to_string(m_config.limits.max_batch_voxels) + " voxels",
                   {}};
    }
    touched.push_back(*box);
  }

  // The editor is the only thread that retires chunks, so the versions it reads here stay alive without a pin.
  EditStaging staging([this](ChunkCoord c) { return m_table->findChunk(c); });
  for (std::size_t i = 0; i < batch.size(); ++i) staging.apply(batch[i], touched[i]);

  EditResult result;
  std::vector<ChangeEvent> events;
  for (const auto& [c, staged] : staging.sorted()) {
    const VoxelBox diff = EditStaging::diffBox(c, *staged);
    if (diff.empty()) continue;
    ChunkTable::Slot& slot = m_table->slotFor(c);
    const std::uint64_t version = slot.version.load(std::memory_order_relaxed) + 1;
    std::unique_ptr<const Chunk> next = Chunk::make(version, staged->voxels);
    if (next->isUniform() && next->uniformValue() == kAir) next.reset();  // missing chunks are air
    m_table->publish(slot, std::move(next));
    events.push_back({c, version, diff});
    result.chunks.push_back(c);
    result.changed = unite(result.changed, diff);
  }
  m_epochs->advanceAndReclaim();
  m_listeners->notify(events);
  return result;
}

Result<EditResult> World::fillBox(const VoxelBox& box, std::uint8_t material) {
  const Vec3d lo{double(box.min.x), double(box.min.y), double(box.min.z)};
  const Vec3d hi{double(box.max.x), double(box.max.y), double(box.max.z)};
  return apply(ShapeEdit{BoxShape{lo, hi}, EditOp::kFill, material});
}
Result<EditResult> World::clearBox(const VoxelBox& box) {
  const Vec3d lo{double(box.min.x), double(box.min.y), double(box.min.z)};
  const Vec3d hi{double(box.max.x), double(box.max.y), double(box.max.z)};
  return apply(ShapeEdit{BoxShape{lo, hi}, EditOp::kClear, kAirMaterial});
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
  const std::uint64_t id = m_listeners->add(std::move(listener));
  return Subscription(m_listeners, id);
}

}  // namespace vtp::terrain
