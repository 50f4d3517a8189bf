#pragma once
/// \file
/// Running a loop's iterations on several threads: the interface the library's parallel passes take (the Bullet
/// adapter's contact pass, bullet/bullet_terrain.h), so a game server can hand them its own job system, and a plain
/// thread pool that implements it for servers without one.
///
/// The library's parallel passes give the same answers for any number of workers: each iteration writes only its
/// own results, and what they add up is summed in iteration order.

#include <cstddef>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "vtp/terrain/status.h"

namespace vtp::physics {

/// What a parallel pass runs its iterations on.
class TaskRunner {
 public:
  virtual ~TaskRunner() = default;
  /// How many threads may run iterations at once, the calling thread included; worker indices lie below it.
  virtual unsigned workers() const noexcept = 0;
  /// Calls `body(index, worker)` once for every index in [0, count) and returns when every call has returned. Calls
  /// may run concurrently, in any order, on any worker (0 .. workers() - 1); no two calls on one worker overlap. The
  /// library's bodies do not throw; a runner should still not lose one that does (ThreadPool: the other iterations
  /// run, then forEach rethrows the first exception). One forEach at a time per runner.
  virtual void forEach(std::size_t count, const std::function<void(std::size_t index, unsigned worker)>& body) = 0;
};

/// A fixed set of threads running forEach loops; the calling thread works as worker 0. Thread-safety: one forEach
/// at a time (callers serialise); workers() may be read from any thread.
class ThreadPool final : public TaskRunner {
 public:
  /// `threads` workers in all (1 .. 256), the calling thread counted: threads - 1 are started. Errors: a count out of
  /// range (kInvalidArgument), a thread the system would not start (kOutOfMemory; none is left running).
  static Result<std::unique_ptr<ThreadPool>> create(unsigned threads);
  /// Stops and joins the threads (after any forEach returned).
  ~ThreadPool() override;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned workers() const noexcept override { return m_workers; }
  void forEach(std::size_t count, const std::function<void(std::size_t, unsigned)>& body) override;

 private:
  struct Shared;
  explicit ThreadPool(unsigned workers);
  static void work(Shared& shared, unsigned worker);

  unsigned m_workers;
  std::unique_ptr<Shared> m_shared;
  std::vector<std::thread> m_threads;
};

}  // namespace vtp::physics
