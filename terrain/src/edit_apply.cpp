#include "edit_apply.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "chunk_table.h"
#include "shape_coverage.h"
#include "voxel_ops.h"

namespace vtp::terrain {
namespace {

Error invalid(std::string message) { return Error{ErrorCode::kInvalidArgument, std::move(message), {}}; }

bool finite(Vec3d v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

std::string str(const VoxelBox& b) {
  auto c = [](VoxelCoord v) { return std::to_string(v.x) + "," + std::to_string(v.y) + "," + std::to_string(v.z); };
  return "[" + c(b.min) + " .. " + c(b.max) + ")";
}

Status checkBox(const VoxelBox& box, const WorldConfig& config) {
  if (box.empty()) return invalid("empty box " + str(box) + " (min must be below max on every axis)");
  if (!insideStorage(box)) {
    return Error{ErrorCode::kOutOfRange, "box " + str(box) + " leaves the storage range |v| < 2^24", {}};
  }
  if (box.volume() > config.limits.max_edit_voxels) {
    return Error{ErrorCode::kLimitExceeded,
                 "edit touches " + std::to_string(box.volume()) + " voxels, over the cap of " +
                     std::to_string(config.limits.max_edit_voxels),
                 {}};
  }
  if (chunkCount(box) > config.limits.max_edit_chunks) {
    return Error{ErrorCode::kLimitExceeded,
                 "edit box " + str(box) + " overlaps " + std::to_string(chunkCount(box)) + " chunks, over the cap of " +
                     std::to_string(config.limits.max_edit_chunks),
                 {}};
  }
  return {};
}

Status checkMaterial(std::uint8_t m, const WorldConfig& config, bool allow_water, const char* what) {
  if (!config.materials.contains(m)) {
    return Error{ErrorCode::kUnknownMaterial, std::string(what) + " material id " + std::to_string(m) + " is not defined", {}};
  }
  if (m == kAirMaterial || (m == kWaterMaterial && !allow_water)) {
    return invalid(std::string(what) + " material cannot be " + config.materials[m].name);
  }
  return {};
}

Status checkRadius(double radius, const WorldConfig& config) {
  if (!std::isfinite(radius) || radius <= 0) return invalid("radius must be finite and > 0");
  if (radius > config.limits.max_radius) {
    return Error{ErrorCode::kLimitExceeded,
                 "radius " + std::to_string(radius) + " is over the cap of " + std::to_string(config.limits.max_radius),
                 {}};
  }
  return {};
}

Result<VoxelBox> validateShape(const ShapeEdit& e, const WorldConfig& config) {
  if (e.op != EditOp::kFill && e.op != EditOp::kClear && e.op != EditOp::kPaint) {
    return invalid("unknown edit operation " + std::to_string(int(e.op)));
  }
  if (e.op == EditOp::kFill) {
    if (Status s = checkMaterial(e.material, config, true, "fill"); !s) return s.error();
  } else if (e.op == EditOp::kPaint) {
    if (Status s = checkMaterial(e.material, config, false, "paint"); !s) return s.error();
  }
  if (const auto* b = std::get_if<BoxShape>(&e.shape)) {
    if (!finite(b->min) || !finite(b->max)) return invalid("box corners must be finite");
    if (!(b->min.x < b->max.x && b->min.y < b->max.y && b->min.z < b->max.z)) {
      return invalid("empty box: min must be below max on every axis");
    }
  } else if (const auto* s = std::get_if<SphereShape>(&e.shape)) {
    if (!finite(s->center)) return invalid("sphere centre must be finite");
    if (Status st = checkRadius(s->radius, config); !st) return st.error();
  } else {
    const auto& c = std::get<CylinderShape>(e.shape);
    if (!finite(c.center)) return invalid("cylinder centre must be finite");
    if (Status st = checkRadius(c.radius, config); !st) return st.error();
    if (!std::isfinite(c.height) || c.height <= 0) return invalid("cylinder height must be finite and > 0");
    // Beyond storage height it cannot be stored anyway; this also keeps touchedBox's arithmetic exact.
    if (c.height > 2.0 * kStorageLimit) {
      return Error{ErrorCode::kOutOfRange, "cylinder height leaves the storage range", {}};
    }
  }
  const std::optional<VoxelBox> box = touchedBox(e.shape);
  if (!box) return Error{ErrorCode::kOutOfRange, "shape leaves the storage range |v| < 2^24", {}};
  if (Status s = checkBox(*box, config); !s) return s.error();
  return *box;
}

}  // namespace

Status BatchTotals::add(const VoxelBox& touched) {
  m_voxels += touched.volume();
  if (m_voxels > m_limits.max_batch_voxels) {
    return Error{ErrorCode::kLimitExceeded,
                 "batch touches more than the cap of " + std::to_string(m_limits.max_batch_voxels) + " voxels", {}};
  }
  m_boxes.push_back(touched);
  m_chunk_sum += chunkCount(touched);
  if (m_chunk_sum <= m_limits.max_batch_chunks) return {};
  // Past the cap by the sum: count distinct chunks, all boxes so far the first time, then each new one.
  for (std::size_t i = m_distinct.empty() ? 0 : m_boxes.size() - 1; i < m_boxes.size(); ++i) {
    if (Status s = countDistinct(m_boxes[i]); !s) return s;
  }
  return {};
}

Status BatchTotals::countDistinct(const VoxelBox& box) {
  const ChunkCoord lo = chunkOf(box.min), hi = chunkOf({box.max.x - 1, box.max.y - 1, box.max.z - 1});
  for (std::int32_t z = lo.z; z <= hi.z; ++z) {
    for (std::int32_t y = lo.y; y <= hi.y; ++y) {
      for (std::int32_t x = lo.x; x <= hi.x; ++x) {
        m_distinct.insert({x, y, z});
        if (std::int64_t(m_distinct.size()) > m_limits.max_batch_chunks) {
          return Error{ErrorCode::kLimitExceeded,
                       "batch overlaps more than the cap of " + std::to_string(m_limits.max_batch_chunks) + " chunks",
                       {}};
        }
      }
    }
  }
  return {};
}

Result<VoxelBox> validateEdit(const EditCommand& edit, const WorldConfig& config) {
  if (const auto* e = std::get_if<ShapeEdit>(&edit)) return validateShape(*e, config);
  if (const auto* e = std::get_if<ReplaceEdit>(&edit)) {
    if (Status s = checkMaterial(e->from, config, true, "replace 'from'"); !s) return s.error();
    if (Status s = checkMaterial(e->to, config, true, "replace 'to'"); !s) return s.error();
    // Occupancy means "how solid" for solids and "how full" for water; swapping across kinds would reinterpret it.
    if (isSolidMaterial(e->from) != isSolidMaterial(e->to)) {
      return invalid("replace cannot turn water into a solid or a solid into water (use fill and clear)");
    }
    if (Status s = checkBox(e->box, config); !s) return s.error();
    return e->box;
  }
  if (const auto* e = std::get_if<SetVoxelEdit>(&edit)) {
    if (!insideStorage(e->at)) return Error{ErrorCode::kOutOfRange, "voxel leaves the storage range |v| < 2^24", {}};
    if (!config.materials.contains(e->value.material)) {
      return Error{ErrorCode::kUnknownMaterial, "material id " + std::to_string(e->value.material) + " is not defined", {}};
    }
    return VoxelBox{e->at, {e->at.x + 1, e->at.y + 1, e->at.z + 1}};
  }
  const auto& e = std::get<WriteRegionEdit>(edit);
  if (Status s = checkBox(e.box, config); !s) return s.error();
  if (std::int64_t(e.voxels.size()) != e.box.volume()) {
    return invalid("region holds " + std::to_string(e.voxels.size()) + " voxels, box needs " +
                   std::to_string(e.box.volume()));
  }
  for (std::size_t i = 0; i < e.voxels.size(); ++i) {
    if (!config.materials.contains(e.voxels[i].material)) {
      return Error{ErrorCode::kUnknownMaterial,
                   "region voxel " + std::to_string(i) + " has undefined material id " +
                       std::to_string(e.voxels[i].material),
                   {}};
    }
  }
  return e.box;
}

std::size_t ChunkKeyHash::operator()(const ChunkCoord& c) const { return ChunkTable::hash(c); }

EditStaging::Staged& EditStaging::stage(ChunkCoord c) {
  auto [it, inserted] = m_chunks.try_emplace(c);
  if (inserted) {
    it->second = std::make_unique<Staged>();
    it->second->original = m_source(c);
    if (it->second->original) {
      it->second->original->copyTo(it->second->voxels);
    } else {
      it->second->voxels.fill(kAir);
    }
  }
  return *it->second;
}

template <class Fn>
void EditStaging::forEachVoxel(const VoxelBox& box, Fn&& fn) {
  const ChunkCoord lo = chunkOf(box.min);
  const ChunkCoord hi = chunkOf({box.max.x - 1, box.max.y - 1, box.max.z - 1});
  for (std::int32_t cz = lo.z; cz <= hi.z; ++cz) {
    for (std::int32_t cy = lo.y; cy <= hi.y; ++cy) {
      for (std::int32_t cx = lo.x; cx <= hi.x; ++cx) {
        const ChunkCoord c{cx, cy, cz};
        const VoxelBox sub = intersect(box, chunkBox(c));
        const VoxelCoord o = chunkOrigin(c);
        auto& voxels = stage(c).voxels;
        for (std::int32_t z = sub.min.z; z < sub.max.z; ++z) {
          for (std::int32_t y = sub.min.y; y < sub.max.y; ++y) {
            for (std::int32_t x = sub.min.x; x < sub.max.x; ++x) {
              fn(voxels[chunkIndex(x - o.x, y - o.y, z - o.z)], VoxelCoord{x, y, z});
            }
          }
        }
      }
    }
  }
}

void EditStaging::apply(const EditCommand& edit, const VoxelBox& touched) {
  if (const auto* e = std::get_if<ShapeEdit>(&edit)) {
    forEachVoxel(
        touched,
        [&](Voxel& v, VoxelCoord at) {
          const double cov = 0.5 + insideDepth(e->shape, at);
          if (cov > 0.0) v = applyOp(v, e->op, e->material, coverageLevel(cov));
        });
  } else if (const auto* r = std::get_if<ReplaceEdit>(&edit)) {
    forEachVoxel(
        touched,
        [&](Voxel& v, VoxelCoord) {
          if (v.material == r->from && v.occupancy > 0) v.material = r->to;
        });
  } else if (const auto* s = std::get_if<SetVoxelEdit>(&edit)) {
    forEachVoxel(
        touched, [&](Voxel& v, VoxelCoord) { v = canonicalVoxel(s->value.material, s->value.occupancy); });
  } else {
    const auto& w = std::get<WriteRegionEdit>(edit);
    const std::int64_t sx = w.box.max.x - w.box.min.x, sy = w.box.max.y - w.box.min.y;
    forEachVoxel(
        touched,
        [&](Voxel& v, VoxelCoord at) {
          const Voxel in = w.voxels[std::size_t((at.x - w.box.min.x) + sx * ((at.y - w.box.min.y) + sy * (at.z - w.box.min.z)))];
          v = canonicalVoxel(in.material, in.occupancy);
        });
  }
}

std::vector<std::pair<ChunkCoord, const EditStaging::Staged*>> EditStaging::sorted() const {
  std::vector<std::pair<ChunkCoord, const Staged*>> out;
  out.reserve(m_chunks.size());
  for (const auto& [c, s] : m_chunks) out.emplace_back(c, s.get());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

VoxelBox EditStaging::diffBox(ChunkCoord c, const Staged& staged) {
  VoxelBox box{};
  const VoxelCoord o = chunkOrigin(c);
  for (int z = 0; z < kChunkSize; ++z) {
    for (int y = 0; y < kChunkSize; ++y) {
      for (int x = 0; x < kChunkSize; ++x) {
        const Voxel before = staged.original ? staged.original->at(x, y, z) : kAir;
        if (staged.voxels[chunkIndex(x, y, z)] == before) continue;
        const VoxelCoord v{o.x + x, o.y + y, o.z + z};
        box = unite(box, VoxelBox{v, {v.x + 1, v.y + 1, v.z + 1}});
      }
    }
  }
  return box;
}

}  // namespace vtp::terrain
