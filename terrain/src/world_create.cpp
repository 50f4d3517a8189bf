// Compiled for baseline x86-64 (see vtp_baseline_sources): the CPU check must run before any x86-64-v3 code.
#include "vtp/terrain/cpu.h"
#include "vtp/terrain/world.h"

namespace vtp::terrain {

Result<std::unique_ptr<World>> World::create(WorldConfig config) {
  if (!cpuSupported()) return Error{ErrorCode::kUnsupportedCpu, cpuRequirementMessage(), {}};
  return createChecked(std::move(config));
}

}  // namespace vtp::terrain
