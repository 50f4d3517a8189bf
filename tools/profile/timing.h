#pragma once
// Timing rules of every vtp-profile figure (tools/README.md): single thread, median of 3 repetitions, calls under 1 us
// timed in batches of at least 1000 between two clock reads, with the clock's own overhead subtracted.

#include <chrono>
#include <cstddef>
#include <functional>

namespace vtp::tools {

/// Nanoseconds one steady_clock::now() pair costs (median of many), to subtract from each batch.
double clockOverheadNs();

/// Times `batch(n)` running n calls; returns ns per call, median of `reps` repetitions. [Unit: ns]
double medianNsPerCall(const std::function<void(std::size_t)>& batch, std::size_t calls_per_batch, int reps = 3);

/// An index cycling through [0, n), n > 0, for timed loops over a set of inputs: a modulo there would add an integer
/// division (tens of cycles) to every call measured.
class Cycle {
 public:
  explicit Cycle(std::size_t n) : m_n(n) {}
  std::size_t next() {
    const std::size_t at = m_at;
    m_at = m_at + 1 == m_n ? 0 : m_at + 1;
    return at;
  }

 private:
  std::size_t m_n, m_at = 0;
};

/// Wall time of one call, median of `reps`. [Unit: ms]
double medianMs(const std::function<void()>& fn, int reps = 3);

}  // namespace vtp::tools
