#include "vtp/terrain/material_table.h"

#include <charconv>
#include <cmath>

#include "vtp/terrain/voxel.h"

namespace vtp::terrain {
namespace {

bool validName(std::string_view name) {
  if (name.empty() || name.size() > MaterialTable::kMaxNameLength) return false;
  for (char ch : name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
    if (!ok) return false;
  }
  // A name that parses as a number would be ambiguous with numeric ids in edit scripts.
  return !(name[0] >= '0' && name[0] <= '9');
}

}  // namespace

MaterialTable::MaterialTable() {
  m_materials[kAirMaterial] = {"air", 0.0f, 0.0f, 1.2f};
  m_materials[kWaterMaterial] = {"water", 0.0f, 0.0f, 1000.0f};
  m_defined[kAirMaterial] = m_defined[kWaterMaterial] = true;
}

MaterialTable MaterialTable::defaults() {
  MaterialTable t;
  // Values are plausible game defaults: friction (Coulomb), restitution, density in kg/m^3.
  (void)t.define(2, {"rock", 0.8f, 0.1f, 2600.0f});
  (void)t.define(3, {"dirt", 0.7f, 0.05f, 1500.0f});
  (void)t.define(4, {"sand", 0.6f, 0.0f, 1600.0f});
  (void)t.define(5, {"grass", 0.7f, 0.05f, 1400.0f});
  (void)t.define(6, {"ore", 0.8f, 0.1f, 3500.0f});
  return t;
}

Status MaterialTable::define(std::uint8_t id, Material material) {
  if (!isSolidMaterial(id)) {
    return Error{ErrorCode::kInvalidArgument, "material id " + std::to_string(id) + " is reserved (0 air, 1 water)", {}};
  }
  if (!validName(material.name)) {
    return Error{ErrorCode::kInvalidArgument,
                 "material name '" + material.name + "' must be 1-32 characters of [a-z0-9_-], not starting with a digit",
                 {}};
  }
  if (auto other = find(material.name); other && *other != id) {
    return Error{ErrorCode::kInvalidArgument,
                 "material name '" + material.name + "' is already used by id " + std::to_string(*other), {}};
  }
  if (!std::isfinite(material.friction) || material.friction < 0.0f || !std::isfinite(material.restitution) ||
      material.restitution < 0.0f || material.restitution > 1.0f || !std::isfinite(material.density) ||
      material.density <= 0.0f) {
    return Error{ErrorCode::kInvalidArgument,
                 "material '" + material.name + "' needs friction >= 0, restitution in [0,1], density > 0, all finite",
                 {}};
  }
  m_materials[id] = std::move(material);
  m_defined[id] = true;
  return {};
}

std::optional<std::uint8_t> MaterialTable::find(std::string_view name) const noexcept {
  for (int id = 0; id < 256; ++id) {
    if (m_defined[id] && m_materials[id].name == name) return std::uint8_t(id);
  }
  return std::nullopt;
}

Result<std::uint8_t> MaterialTable::parse(std::string_view text) const {
  unsigned id = 0;
  const char* end = text.data() + text.size();
  if (auto [p, ec] = std::from_chars(text.data(), end, id); ec == std::errc{} && p == end) {
    if (id < 256 && m_defined[id]) return std::uint8_t(id);
  } else if (auto found = find(text)) {
    return *found;
  }
  return Error{ErrorCode::kUnknownMaterial, "unknown material '" + std::string(text) + "'", {}};
}

std::size_t MaterialTable::size() const noexcept {
  std::size_t n = 0;
  for (bool d : m_defined) n += d;
  return n;
}

bool operator==(const MaterialTable& a, const MaterialTable& b) {
  for (int id = 0; id < 256; ++id) {
    if (a.m_defined[id] != b.m_defined[id]) return false;
    if (!a.m_defined[id]) continue;
    const Material& x = a.m_materials[id];
    const Material& y = b.m_materials[id];
    if (x.name != y.name || x.friction != y.friction || x.restitution != y.restitution || x.density != y.density) {
      return false;
    }
  }
  return true;
}

}  // namespace vtp::terrain
