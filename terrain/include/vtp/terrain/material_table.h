#pragma once
/// \file
/// The world's material table: names and physical properties of solid materials 2..255.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "vtp/terrain/status.h"

namespace vtp::terrain {

/// Physical properties of one material.
struct Material {
  std::string name;          ///< 1..32 characters of [a-z0-9_-]; unique in the table.
  float friction = 0.6f;     ///< Coulomb friction coefficient, finite, >= 0.
  float restitution = 0.0f;  ///< Bounciness in [0, 1].
  float density = 2000.0f;   ///< [Unit: kg per cubic world unit] finite, > 0.
};

/// Up to 256 materials by id. Ids 0 ("air") and 1 ("water") are reserved and always present; 2..255 are solids
/// that a world may define. Value type; not synchronised (a World owns an immutable copy).
class MaterialTable {
 public:
  /// Longest material name. [Unit: byte]
  static constexpr std::size_t kMaxNameLength = 32;

  /// A table holding only air and water.
  MaterialTable();
  /// The default table (terrain/README.md): 2 rock, 3 dirt, 4 sand, 5 grass, 6 ore.
  static MaterialTable defaults();

  /// Defines or redefines solid material `id` (2..255). Fails with kInvalidArgument on a reserved id, a bad name, a
  /// name used by another id, or non-finite / out-of-range properties; the table is unchanged then.
  Status define(std::uint8_t id, Material material);

  /// True for 0, 1 and every defined solid id.
  bool contains(std::uint8_t id) const noexcept { return m_defined[id]; }
  /// Precondition: contains(id).
  const Material& operator[](std::uint8_t id) const noexcept { return m_materials[id]; }
  /// The id named `name` ("air", "water" or a defined solid), if any.
  std::optional<std::uint8_t> find(std::string_view name) const noexcept;
  /// Parses a table name or a decimal id ("rock", "2", "air", "water"); kUnknownMaterial if it names nothing defined.
  Result<std::uint8_t> parse(std::string_view text) const;
  /// Number of defined ids, air and water included.
  std::size_t size() const noexcept;

  friend bool operator==(const MaterialTable& a, const MaterialTable& b);

 private:
  std::array<Material, 256> m_materials;
  std::array<bool, 256> m_defined{};
};

}  // namespace vtp::terrain
