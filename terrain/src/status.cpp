#include "vtp/terrain/status.h"

namespace vtp {

const char* errorCodeName(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kOutOfRange: return "out of range";
    case ErrorCode::kLimitExceeded: return "limit exceeded";
    case ErrorCode::kUnknownMaterial: return "unknown material";
    case ErrorCode::kIo: return "i/o error";
    case ErrorCode::kCorrupt: return "corrupt";
    case ErrorCode::kUnsupportedCpu: return "unsupported cpu";
    case ErrorCode::kOutOfMemory: return "out of memory";
  }
  return "unknown error";
}

}  // namespace vtp
