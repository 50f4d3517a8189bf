#pragma once
// The tests' replacement of the global operator new (alloc_probe.cpp, linked into the terrain and the physics
// tests), so a test can see how large the allocations of a call are and make one fail, as a process memory limit
// would. Replacing these is allowed ([replacement.functions]); every form that could pair with the replaced deletes is
// replaced, so the sanitizers see matching malloc/free.

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace vtp::test::alloc_probe {

/// While armed, g_probe_largest keeps the largest single request.
extern std::atomic<bool> g_probe_armed;
extern std::atomic<std::size_t> g_probe_largest;
/// Requests over this fail (operator new throws std::bad_alloc; the nothrow forms return null).
extern std::atomic<std::size_t> g_fail_above;
/// When positive, each request counts it down, and the one that takes it to 0 fails.
extern std::atomic<std::int64_t> g_fail_countdown;

}  // namespace vtp::test::alloc_probe
