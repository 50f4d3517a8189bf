#include "vtp/physics/mask_index.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <shared_mutex>

#include "mask_table.h"
#include "query_range.h"
#include "vtp/physics/pair_tracker.h"

namespace vtp::physics {

using terrain::ChunkCoord;
using terrain::kChunkSize;
using terrain::Voxel;
using terrain::VoxelBox;
using terrain::VoxelCoord;

namespace {

// x bits lo..hi of a row, and z rows lo..hi (whole bytes) of a slice word: the XZ footprint of a query in one chunk.
constexpr std::uint8_t rowBits(int lo, int hi) { return std::uint8_t(((1u << (hi + 1)) - 1) & ~((1u << lo) - 1)); }
constexpr std::uint64_t zRows(int lo, int hi) {
  return (hi == 7 ? ~std::uint64_t(0) : (std::uint64_t(1) << (8 * (hi + 1))) - 1) & ~((std::uint64_t(1) << (8 * lo)) - 1);
}

}  // namespace

struct MaskIndex::State {
  mutable std::shared_mutex mutex;
  MaskTable table;
  std::size_t mixed = 0, full_solid = 0, full_water = 0;

  void count(MaskTag tag, int sign) {
    if (tag == MaskTag::kMixed) mixed += std::size_t(sign);
    if (tag == MaskTag::kFullSolid) full_solid += std::size_t(sign);
    if (tag == MaskTag::kFullWater) full_water += std::size_t(sign);
  }
  // Reads chunk c's 10^3 box and stores its masks (or drops its entry when the box is empty).
  void refresh(const terrain::World& world, ChunkCoord c, std::vector<Voxel>& box) {
    const VoxelCoord o = terrain::chunkOrigin(c);
    const VoxelBox apron{{o.x - 1, o.y - 1, o.z - 1}, {o.x + kChunkSize + 1, o.y + kChunkSize + 1, o.z + kChunkSize + 1}};
    if (!world.readBox(apron, box).ok()) return;  // outside the readable range: nothing stored there
    Result<ChunkMasks> built = buildChunkMasks(box);
    if (!built.ok()) return;
    if (const MaskTable::Slot* old = table.find(c)) count(old->tag, -1);
    table.set(c, *built);
    count(built->tag, +1);
  }
};

Result<std::unique_ptr<MaskIndex>> MaskIndex::createChecked(terrain::World& world, MaskIndexOptions options) {
  if (options.max_range_chunks <= 0 || options.max_range_chunks > (std::int64_t(1) << 24)) {
    return Error{ErrorCode::kInvalidArgument, "MaskIndex: max_range_chunks must be in (0, 2^24]", {}};
  }
  return std::unique_ptr<MaskIndex>(new MaskIndex(world, options));
}

MaskIndex::MaskIndex(terrain::World& world, MaskIndexOptions options)
    : m_world(world), m_options(options), m_voxel_size(world.voxelSize()), m_state(std::make_unique<State>()) {
  // Subscribe first, then build under the lock: an edit landing during the build waits for it in its listener and
  // then rebuilds its chunks from fresh reads, so nothing is missed. (Not the other way round: the world calls
  // listeners holding its registry lock, so holding ours while subscribing would invert the lock order.)
  m_subscription = world.subscribe([this](std::span<const terrain::ChangeEvent> events) { rebuild(events); });
  std::unique_lock lock(m_state->mutex);
  // Candidates: every stored chunk and its 26 neighbours (a box holding anything is within one chunk of a stored one).
  std::vector<ChunkCoord> candidates;
  {
    auto guard = world.read();
    world.forEachChunk(guard, [&](ChunkCoord c, const terrain::Chunk&) {
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) candidates.push_back({c.x + dx, c.y + dy, c.z + dz});
    });
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::vector<Voxel> box(kMaskBoxVolume);
  for (ChunkCoord c : candidates) m_state->refresh(world, c, box);
  m_state->table.shrink();
}

MaskIndex::~MaskIndex() { m_subscription.reset(); }

void MaskIndex::rebuild(std::span<const terrain::ChangeEvent> events) {
  // Every chunk whose 10^3 box meets a changed voxel: the changed box grown by one voxel, in chunks.
  std::vector<ChunkCoord> chunks;
  for (const terrain::ChangeEvent& e : events) {
    const ChunkCoord lo = terrain::chunkOf({e.changed.min.x - 1, e.changed.min.y - 1, e.changed.min.z - 1});
    const ChunkCoord hi = terrain::chunkOf({e.changed.max.x, e.changed.max.y, e.changed.max.z});
    for (std::int32_t z = lo.z; z <= hi.z; ++z)
      for (std::int32_t y = lo.y; y <= hi.y; ++y)
        for (std::int32_t x = lo.x; x <= hi.x; ++x) chunks.push_back({x, y, z});
  }
  std::sort(chunks.begin(), chunks.end());
  chunks.erase(std::unique(chunks.begin(), chunks.end()), chunks.end());
  std::vector<Voxel> box(kMaskBoxVolume);
  {
    std::unique_lock lock(m_state->mutex);
    for (ChunkCoord c : chunks) m_state->refresh(m_world, c, box);
  }
  // Then the pair trackers re-evaluate their bodies (they query the index, so after the exclusive lock is gone).
  std::vector<VoxelBox> changed;
  for (const terrain::ChangeEvent& e : events) changed.push_back(e.changed);
  std::lock_guard trackers(m_trackers_mutex);
  for (PairTracker* t : m_trackers) t->indexRebuilt(chunks, changed);
}

void MaskIndex::attach(PairTracker* tracker) {
  std::lock_guard lock(m_trackers_mutex);
  m_trackers.push_back(tracker);
}

void MaskIndex::detach(PairTracker* tracker) {
  std::lock_guard lock(m_trackers_mutex);
  std::erase(m_trackers, tracker);
}

Status MaskIndex::query(const Aabb& box, std::vector<ChunkTouch>& out) const {
  out.clear();
  const Result<QueryRange> range = queryRange(box, m_voxel_size, "MaskIndex::query");
  if (!range) return range.error();
  if (range->empty) return {};
  const std::int64_t* lo = range->lo;
  const std::int64_t* hi = range->hi;
  const ChunkCoord clo = range->chunk_lo, chi = range->chunk_hi;

  // The test of one chunk: FULL tags answer directly; MIXED ANDs the Y slices in range with the XZ footprint.
  const MaskTable& table = m_state->table;
  auto test = [&](const MaskTable::Slot& slot) {
    const ChunkCoord c = slot.key;
    ChunkTouch t{c, slot.tag == MaskTag::kFullSolid, slot.tag == MaskTag::kFullWater, slot.tag};
    if (slot.tag == MaskTag::kMixed) {
      const MaskTable::Masks& m = table.masksOf(slot);
      const std::int64_t o[3] = {std::int64_t(c.x) * kChunkSize, std::int64_t(c.y) * kChunkSize,
                                 std::int64_t(c.z) * kChunkSize};
      int l[3], h[3];
      for (int a = 0; a < 3; ++a) {
        l[a] = int(std::max<std::int64_t>(lo[a] - o[a], 0));
        h[a] = int(std::min<std::int64_t>(hi[a] - o[a], kChunkSize - 1));
      }
      const std::uint64_t footprint = (std::uint64_t(rowBits(l[0], h[0])) * 0x0101010101010101ull) & zRows(l[2], h[2]);
      std::uint64_t solid = 0, water = 0;
      for (int y = l[1]; y <= h[1]; ++y) {
        solid |= m.solid[std::size_t(y)];
        water |= m.water[std::size_t(y)];
      }
      t.solid = (solid & footprint) != 0;
      t.water = (water & footprint) != 0;
    }
    if (t.solid || t.water) out.push_back(t);
  };

  std::shared_lock lock(m_state->mutex);
  if (range->chunkCount() <= double(m_options.max_range_chunks)) {
    for (std::int32_t z = clo.z; z <= chi.z; ++z)
      for (std::int32_t y = clo.y; y <= chi.y; ++y)
        for (std::int32_t x = clo.x; x <= chi.x; ++x) {
          if (const MaskTable::Slot* slot = table.find({x, y, z})) test(*slot);
        }
    return {};
  }
  // A huge box: one pass over the entries instead of the range, then (z, y, x) order.
  table.forEach([&](const MaskTable::Slot& slot) {
    if (range->containsChunk(slot.key)) test(slot);
  });
  std::sort(out.begin(), out.end(), [](const ChunkTouch& a, const ChunkTouch& b) { return a.chunk < b.chunk; });
  return {};
}

ChunkMasks MaskIndex::masks(ChunkCoord chunk) const {
  std::shared_lock lock(m_state->mutex);
  return m_state->table.get(chunk);
}

MaskIndexStats MaskIndex::stats() const {
  std::shared_lock lock(m_state->mutex);
  MaskIndexStats s;
  s.entries = m_state->table.size();
  s.mixed = m_state->mixed;
  s.full_solid = m_state->full_solid;
  s.full_water = m_state->full_water;
  s.mask_bytes = s.mixed * sizeof(MaskTable::Masks);
  // Slots (key, tag, mask slot) at load factor <= 1/2, plus unused capacity of the mask array.
  s.index_bytes = m_state->table.slotCount() * sizeof(MaskTable::Slot) +
                  (m_state->table.maskCapacity() * sizeof(MaskTable::Masks) - s.mask_bytes);
  return s;
}

}  // namespace vtp::physics
