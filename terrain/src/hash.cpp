#include "vtp/terrain/hash.h"

#include <cstdio>

#include "vtp/terrain/world_file.h"

namespace vtp::terrain {

std::string hashToHex(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::uint64_t worldHash(const World& world) { return fnv1a64(encodeWorld(world)); }

}  // namespace vtp::terrain
