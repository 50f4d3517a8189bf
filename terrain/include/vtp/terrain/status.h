#pragma once
/// \file
/// Error values returned by every vtp entry point that takes data from outside (edits, files, tool input).
/// The library never throws for bad input, never prints and never exits: it returns one of these. (A broken internal
/// contract, such as value() on an error below, is no input error: VTP_ASSERT reports it and aborts, assert.h.)

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "vtp/terrain/assert.h"

namespace vtp {

/// What kind of problem an Error describes. Stable: tools map them to exit codes.
enum class ErrorCode : std::uint8_t {
  kInvalidArgument,  ///< A parameter is malformed: NaN, infinite, negative radius, empty box, bad name.
  kOutOfRange,       ///< A coordinate lies outside the range the world stores (|v| < 2^24).
  kLimitExceeded,    ///< An edit or batch touches more voxels or chunks than the world's caps allow; a read too large;
                     ///< a world file over LoadOptions' size or memory limit.
  kUnknownMaterial,  ///< A material id or name that the world's material table does not define.
  kIo,               ///< The operating system refused a read, write, fsync or rename.
  kCorrupt,          ///< A world file failed validation (checksum, framing, bounds, canonical form).
  kUnsupportedCpu,   ///< The CPU lacks an instruction set the build targets (x86-64-v3).
  kOutOfMemory,      ///< An allocation the request needed failed (the process's memory limit); nothing changed.
};

/// Short lowercase name of a code, e.g. "corrupt".
const char* errorCodeName(ErrorCode code) noexcept;

/// A failure: a code and a one-line human-readable message that names the problem.
struct Error {
  ErrorCode code = ErrorCode::kInvalidArgument;
  std::string message;                      ///< One line, no trailing newline.
  std::optional<std::uint64_t> byte_offset; ///< For file errors: offset of the offending byte. [Unit: byte]
};

/// Success or an Error. Cheap to return; check `ok()` before use.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : m_error(std::move(error)) {}  // NOLINT: implicit by design, `return Error{...}` reads well.
  bool ok() const noexcept { return !m_error.has_value(); }
  explicit operator bool() const noexcept { return ok(); }
  /// Precondition: !ok().
  const Error& error() const noexcept {
    VTP_ASSERT(!ok(), "Status::error() on an ok status");
    return *m_error;
  }

 private:
  std::optional<Error> m_error;
};

/// A value or an Error.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : m_v(std::in_place_index<0>, std::move(value)) {}   // NOLINT: implicit by design.
  Result(Error error) : m_v(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit by design.
  bool ok() const noexcept { return m_v.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  /// Precondition: ok().
  T& value() & noexcept {
    VTP_ASSERT(ok(), "Result::value() (or * or ->) on an error result");
    return *std::get_if<0>(&m_v);
  }
  const T& value() const& noexcept {
    VTP_ASSERT(ok(), "Result::value() (or * or ->) on an error result");
    return *std::get_if<0>(&m_v);
  }
  T&& value() && noexcept {
    VTP_ASSERT(ok(), "Result::value() on an error result");
    return std::move(*std::get_if<0>(&m_v));
  }
  T* operator->() noexcept { return &value(); }
  const T* operator->() const noexcept { return &value(); }
  T& operator*() & noexcept { return value(); }
  const T& operator*() const& noexcept { return value(); }
  /// Precondition: !ok().
  const Error& error() const noexcept {
    VTP_ASSERT(!ok(), "Result::error() on an ok result");
    return *std::get_if<1>(&m_v);
  }
  Status status() const { return ok() ? Status{} : Status{error()}; }

 private:
  std::variant<T, Error> m_v;
};

}  // namespace vtp
