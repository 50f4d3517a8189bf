// Compiled for baseline x86-64 (see vtp_baseline_sources): the CPU check must run before any x86-64-v3 code.
#include "vtp/physics/mask_index.h"
#include "vtp/terrain/cpu.h"

namespace vtp::physics {

Result<std::unique_ptr<MaskIndex>> MaskIndex::create(terrain::World& world, MaskIndexOptions options) {
  if (!cpuSupported()) return Error{ErrorCode::kUnsupportedCpu, cpuRequirementMessage(), {}};
  return createChecked(world, options);
}

}  // namespace vtp::physics
