// Breaks one VTP_ASSERT on purpose (tests/assert/expect_abort.cmake runs it and requires the abort and its message):
//   assert_fires macro   VTP_ASSERT(false, "deliberately broken")
//   assert_fires value   Result::value() on an error result
//   assert_fires error   Status::error() on an ok status
// Reaching the end means the check did not fire (asserts off in this build): it says so and exits 0, which the
// script counts as a failure.
#include <cstdio>
#include <cstring>

#include "vtp/terrain/assert.h"
#include "vtp/terrain/status.h"

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "macro";
  std::fprintf(stderr, "assert_fires %s: VTP_ASSERTS_ENABLED=%d\n", mode, VTP_ASSERTS_ENABLED);
  if (std::strcmp(mode, "macro") == 0) {
    VTP_ASSERT(argc < 0, "deliberately broken");  // false, though the compiler cannot know
  } else if (std::strcmp(mode, "value") == 0) {
    const vtp::Result<int> broken = vtp::Error{vtp::ErrorCode::kCorrupt, "deliberately broken", {}};
    std::printf("%d\n", broken.value());
  } else if (std::strcmp(mode, "error") == 0) {
    const vtp::Status fine;
    std::printf("%zu\n", fine.error().message.size());
  } else {
    std::fprintf(stderr, "assert_fires: unknown mode %s\n", mode);
    return 2;
  }
  std::fprintf(stderr, "assert_fires %s: the check did not fire\n", mode);
  return 0;
}
