#pragma once
// What a long run's memory does (vtp-sim's soak): the process's resident set, and per mode the world's and the
// collision cache's bytes, at 120 simulated seconds and at the end. Growth between the two beyond the world's and the
// cache's own is a leak.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim_world.h"

namespace vtp::tools::sim {

/// The tick after which the first sample is taken: 120 s at 60 Hz.
inline constexpr int kSoakMarkTicks = 120 * 60;

class SoakMemory {
 public:
  /// Samples at 120 s (call once, after that tick).
  void mark(const std::vector<std::unique_ptr<SimWorld>>& modes) { m_at_120s = sample(modes); }
  /// Samples at the end of the run.
  void end(const std::vector<std::unique_ptr<SimWorld>>& modes) { m_end = sample(modes); }
  /// The report's `process` section: rss_bytes_at_120s (null when the run was shorter) and rss_bytes_end, and the
  /// same of heap_in_use_bytes (what of the resident set the heap's blocks take). [Unit: byte]
  nlohmann::json processReport() const;
  /// Adds world_memory_bytes_{at_120s,end}, cache_bytes_{at_120s,end}, index_bytes_{at_120s,end} (the mask index)
  /// and collision_live_bytes_{at_120s,end} (every block the mode's terrain collision holds, alloc_hook.h) to the
  /// section of `mode`. [Unit: byte]
  void addModeReport(const SimWorld& mode, nlohmann::json& section) const;

 private:
  struct Sample {
    std::size_t rss = 0, heap = 0;
    std::vector<std::string> keys;
    std::vector<std::size_t> world, cache, index, collision;  // per mode, in `keys` order
  };
  static Sample sample(const std::vector<std::unique_ptr<SimWorld>>& modes);
  std::optional<Sample> m_at_120s, m_end;
};

/// The process's resident set size from /proc/self/statm; 0 where it cannot be read. [Unit: byte]
std::size_t residentBytes();
/// Bytes the C heap has handed out and not taken back (glibc's mallinfo2: in use, not free or cached). [Unit: byte]
std::size_t heapInUseBytes();

}  // namespace vtp::tools::sim
