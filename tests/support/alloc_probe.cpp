// The terrain tests' operator new (alloc_probe.h). noinline keeps GCC from pairing an inlined free() with a visible
// new-expression (a -Wmismatched-new-delete false positive).
#include "support/alloc_probe.h"

#include <cstdlib>
#include <new>

namespace vtp::test::alloc_probe {

std::atomic<bool> g_probe_armed{false};
std::atomic<std::size_t> g_probe_largest{0};
std::atomic<std::size_t> g_fail_above{std::size_t(-1)};
std::atomic<std::int64_t> g_fail_countdown{0};

namespace {

void* probedAlloc(std::size_t n) {
  if (n > g_fail_above.load(std::memory_order_relaxed)) return nullptr;
  if (g_fail_countdown.load(std::memory_order_relaxed) > 0 && g_fail_countdown.fetch_sub(1) == 1) return nullptr;
  if (g_probe_armed.load(std::memory_order_relaxed)) {
    std::size_t prev = g_probe_largest.load(std::memory_order_relaxed);
    while (n > prev && !g_probe_largest.compare_exchange_weak(prev, n, std::memory_order_relaxed)) {
    }
  }
  return std::malloc(n == 0 ? 1 : n);
}

}  // namespace
}  // namespace vtp::test::alloc_probe

using vtp::test::alloc_probe::probedAlloc;

[[gnu::noinline]] void* operator new(std::size_t n) {
  if (void* p = probedAlloc(n)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new[](std::size_t n) {
  if (void* p = probedAlloc(n)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return probedAlloc(n); }
[[gnu::noinline]] void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return probedAlloc(n); }
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
