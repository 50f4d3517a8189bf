// VTP_ASSERT's failure path (assert.h): the library's only output, for a broken internal contract.
#include "vtp/terrain/assert.h"

#include <cstdio>
#include <cstdlib>

namespace vtp::detail {

void assertFailed(const char* file, int line, const char* condition, const char* message) noexcept {
  std::fprintf(stderr, "vtp assertion failed: %s:%d: %s: %s\n", file, line, condition, message);
  std::fflush(stderr);
  std::abort();
}

}  // namespace vtp::detail
