#include "materials.h"

namespace vtp::worldgen {

terrain::MaterialTable worldgenMaterials() {
  terrain::MaterialTable table = terrain::MaterialTable::defaults();
  // Plausible game values in the default table's style: Coulomb friction, restitution, density in kg/m^3.
  // define() cannot fail for these fixed, valid entries.
  (void)table.define(kCoal, {"coal", 0.7f, 0.05f, 1400.0f});
  (void)table.define(kIron, {"iron", 0.8f, 0.1f, 5000.0f});
  return table;
}

}  // namespace vtp::worldgen
