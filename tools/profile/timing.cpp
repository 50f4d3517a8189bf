#include "timing.h"

#include <algorithm>
#include <vector>

namespace vtp::tools {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

double clockOverheadNs() {
  std::vector<double> samples;
  for (int i = 0; i < 1001; ++i) {
    const auto a = Clock::now();
    const auto b = Clock::now();
    samples.push_back(std::chrono::duration<double, std::nano>(b - a).count());
  }
  return median(std::move(samples));
}

double medianNsPerCall(const std::function<void(std::size_t)>& batch, std::size_t calls_per_batch, int reps) {
  const double overhead = clockOverheadNs();
  batch(calls_per_batch);  // warm caches and branch predictors
  std::vector<double> per_call;
  for (int r = 0; r < reps; ++r) {
    const auto a = Clock::now();
    batch(calls_per_batch);
    const auto b = Clock::now();
    const double ns = std::chrono::duration<double, std::nano>(b - a).count() - overhead;
    per_call.push_back(std::max(0.0, ns) / double(calls_per_batch));
  }
  return median(std::move(per_call));
}

double medianMs(const std::function<void()>& fn, int reps) {
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    const auto a = Clock::now();
    fn();
    const auto b = Clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(b - a).count());
  }
  return median(std::move(ms));
}

}  // namespace vtp::tools
