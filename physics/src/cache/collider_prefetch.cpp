// ColliderPrefetcher (collider_prefetch.h): a list of chunks and one thread working down it.
#include "vtp/physics/collider_prefetch.h"

#include <time.h>

#include <condition_variable>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

namespace vtp::physics {
namespace {

std::uint64_t threadCpuNs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return std::uint64_t(t.tv_sec) * 1000000000ull + std::uint64_t(t.tv_nsec);
}

}  // namespace

struct ColliderPrefetcher::State {
  explicit State(ColliderCache& c) : cache(c) {}
  ColliderCache& cache;
  mutable std::mutex mutex;
  std::condition_variable wake, idle;
  std::vector<terrain::ChunkCoord> waiting;  // from `next` on
  std::size_t next = 0;
  bool busy = false, stop = false;
  ColliderPrefetchStats stats;
  std::thread thread;

  void run() {
    std::unique_lock lock(mutex);
    for (;;) {
      wake.wait(lock, [&] { return stop || next < waiting.size(); });
      if (stop) return;
      const terrain::ChunkCoord chunk = waiting[next++];
      busy = true;
      lock.unlock();
      const std::uint64_t t0 = threadCpuNs();
      bool built = false, failed = false;
      try {
        if (!cache.holds(chunk)) {
          auto pin = cache.acquire(chunk);  // dropped at once: the cache keeps it
          failed = !pin.ok();
          built = pin.ok() && pin->built();
        }
      } catch (const std::bad_alloc&) {
        failed = true;  // the step builds it when it needs it
      }
      const std::uint64_t spent = threadCpuNs() - t0;
      lock.lock();
      busy = false;
      stats.cpu_ns += spent;
      if (failed) {
        ++stats.failed;
      } else if (built) {
        ++stats.built;
      } else {
        ++stats.held;
      }
      if (next == waiting.size()) idle.notify_all();
    }
  }
};

Result<std::unique_ptr<ColliderPrefetcher>> ColliderPrefetcher::create(ColliderCache& cache,
                                                                       std::function<void()> on_thread_start) {
  auto state = std::make_unique<State>(cache);
  try {
    state->thread = std::thread([s = state.get(), start = std::move(on_thread_start)] {
      if (start) {
        try {
          start();
        } catch (...) {  // a hook that throws only loses what it set up
        }
      }
      s->run();
    });
  } catch (const std::system_error& e) {
    return Error{ErrorCode::kOutOfMemory, std::string("could not start the prefetch thread: ") + e.what(), {}};
  }
  return std::unique_ptr<ColliderPrefetcher>(new ColliderPrefetcher(std::move(state)));
}

ColliderPrefetcher::ColliderPrefetcher(std::unique_ptr<State> state) : m_state(std::move(state)) {}

ColliderPrefetcher::~ColliderPrefetcher() {
  {
    std::lock_guard lock(m_state->mutex);
    m_state->stop = true;
  }
  m_state->wake.notify_all();
  m_state->thread.join();
}

void ColliderPrefetcher::request(std::span<const terrain::ChunkCoord> chunks) {
  std::vector<terrain::ChunkCoord> fresh(chunks.begin(), chunks.end());  // allocated before the lock
  {
    std::lock_guard lock(m_state->mutex);
    State& s = *m_state;
    s.stats.dropped += s.waiting.size() - s.next;
    s.stats.requested += fresh.size();
    s.waiting.swap(fresh);
    s.next = 0;
  }
  m_state->wake.notify_one();
}

void ColliderPrefetcher::wait() {
  std::unique_lock lock(m_state->mutex);
  m_state->idle.wait(lock, [&] { return m_state->next == m_state->waiting.size() && !m_state->busy; });
}

ColliderPrefetchStats ColliderPrefetcher::stats() const {
  std::lock_guard lock(m_state->mutex);
  return m_state->stats;
}

}  // namespace vtp::physics
