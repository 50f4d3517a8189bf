// ThreadPool (task_runner.h): workers sleep on a condition variable between loops; a loop hands out indices from
// one atomic counter, so a slow iteration never holds back the others.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <utility>
#include <mutex>
#include <system_error>

#include "vtp/physics/task_runner.h"

namespace vtp::physics {

struct ThreadPool::Shared {
  std::mutex mutex;
  std::condition_variable start, done;
  std::uint64_t generation = 0;  // one more per loop; a worker runs each generation once
  bool stop = false;
  const std::function<void(std::size_t, unsigned)>* body = nullptr;
  std::size_t count = 0;
  std::atomic<std::size_t> next{0};
  unsigned busy = 0;  // workers that have not finished the current loop
  std::exception_ptr error;  // the loop's first exception, rethrown by forEach (under the mutex)

  void run(unsigned worker) {
    for (std::size_t i = next.fetch_add(1, std::memory_order_relaxed); i < count;
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      try {
        (*body)(i, worker);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
      }
    }
  }
};

Result<std::unique_ptr<ThreadPool>> ThreadPool::create(unsigned threads) {
  if (threads < 1 || threads > 256)
    return Error{ErrorCode::kInvalidArgument, "a thread pool has 1 to 256 threads", {}};
  std::unique_ptr<ThreadPool> pool(new ThreadPool(threads));
  pool->m_threads.reserve(threads - 1);
  try {
    for (unsigned w = 1; w < threads; ++w) pool->m_threads.emplace_back(&ThreadPool::work, std::ref(*pool->m_shared), w);
  } catch (const std::system_error& e) {
    return Error{ErrorCode::kOutOfMemory, std::string("could not start a pool thread: ") + e.what(), {}};
  }  // the pool's destructor joins the threads already started
  return pool;
}

ThreadPool::ThreadPool(unsigned workers) : m_workers(workers), m_shared(std::make_unique<Shared>()) {}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(m_shared->mutex);
    m_shared->stop = true;
  }
  m_shared->start.notify_all();
  for (std::thread& t : m_threads) t.join();
}

void ThreadPool::work(Shared& s, unsigned worker) {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(s.mutex);
      s.start.wait(lock, [&] { return s.stop || s.generation != seen; });
      if (s.stop) return;
      seen = s.generation;
    }
    s.run(worker);
    std::lock_guard lock(s.mutex);
    if (--s.busy == 0) s.done.notify_one();
  }
}

void ThreadPool::forEach(std::size_t count, const std::function<void(std::size_t, unsigned)>& body) {
  if (count == 0) return;
  Shared& s = *m_shared;
  if (m_threads.empty() || count == 1) {
    for (std::size_t i = 0; i < count; ++i) body(i, 0);  // an exception leaves at once: no other thread runs
    return;
  }
  {
    std::lock_guard lock(s.mutex);
    s.body = &body;
    s.count = count;
    s.next.store(0, std::memory_order_relaxed);
    s.busy = unsigned(m_threads.size());
    ++s.generation;
  }
  s.start.notify_all();
  s.run(0);
  std::unique_lock lock(s.mutex);
  s.done.wait(lock, [&] { return s.busy == 0; });
  if (s.error) std::rethrow_exception(std::exchange(s.error, nullptr));
}

}  // namespace vtp::physics
