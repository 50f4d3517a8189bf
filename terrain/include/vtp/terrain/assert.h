#pragma once
/// \file
/// VTP_ASSERT(cond, "message"): a check of an internal contract, one the library's own code must keep whatever its
/// input (bad input is an Error, status.h). When the check fails the program is broken: it writes
/// "vtp assertion failed: <file>:<line>: <cond>: <message>" to stderr and calls std::abort(). This is the only place
/// the library prints or stops the process.
///
/// On when NDEBUG is not defined (Debug builds) or when VTP_ENABLE_ASSERTS is defined (the CMake option VTP_ASSERTS
/// defines it on vtp's own targets, not on the programs that include vtp's headers); otherwise the condition is compiled away: it stays an unevaluated operand of
/// sizeof, so it must still compile as it would when on, and the names it uses count as used, but it is never run.
/// VTP_ASSERTS_ENABLED is 1 when the checks are on, else 0.

namespace vtp::detail {

/// Reports a failed VTP_ASSERT and aborts. Out of line and cold: a check costs its test and one call on the path
/// that is never taken.
[[noreturn, gnu::noinline, gnu::cold]] void assertFailed(const char* file, int line, const char* condition,
                                                        const char* message) noexcept;

}  // namespace vtp::detail

#if !defined(NDEBUG) || defined(VTP_ENABLE_ASSERTS)
#define VTP_ASSERTS_ENABLED 1
#define VTP_ASSERT(cond, message)                                   \
  (__builtin_expect(static_cast<bool>(cond), 1) ? static_cast<void>(0) \
                                                : ::vtp::detail::assertFailed(__FILE__, __LINE__, #cond, message))
#else
#define VTP_ASSERTS_ENABLED 0
#define VTP_ASSERT(cond, message) \
  static_cast<void>(sizeof((cond) ? 0 : (::vtp::detail::assertFailed(__FILE__, __LINE__, #cond, message), 0)))
#endif
