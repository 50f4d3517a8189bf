// Compiled for baseline x86-64 (see vtp_baseline_sources): the CPU check must run before any x86-64-v3 code.
#include "vtp/physics/collider_cache.h"
#include "vtp/terrain/cpu.h"

namespace vtp::physics {

Result<std::unique_ptr<ColliderCache>> ColliderCache::create(terrain::World& world, ColliderCacheOptions options) {
  if (!cpuSupported()) return Error{ErrorCode::kUnsupportedCpu, cpuRequirementMessage(), {}};
  return createChecked(world, options);
}

}  // namespace vtp::physics
