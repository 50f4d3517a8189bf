#pragma once
/// \file
/// Listeners of one source of events (a world's edits, a mask index's rebuilds) and the RAII handle that keeps one
/// subscribed. One piece of code serves every source, so each has the same rules: listeners run in the order they
/// subscribed, and a Subscription's reset() returns only once its listener can no longer run.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "vtp/terrain/assert.h"

namespace vtp::terrain {

/// What a Subscription unsubscribes from. Internal: sources hold a ListenerRegistry.
class ListenerSet : public std::enable_shared_from_this<ListenerSet> {
 public:
  virtual ~ListenerSet() = default;
  virtual void remove(std::uint64_t id) = 0;
};

/// Keeps a listener subscribed while alive (RAII). Movable; may outlive its source (it holds the registry weakly).
class Subscription {
 public:
  Subscription() = default;
  Subscription(Subscription&&) noexcept;
  Subscription& operator=(Subscription&&) noexcept;
  ~Subscription();
  /// Unsubscribes now; afterwards the listener is never called again. Idempotent.
  void reset();

 private:
  template <class... Args>
  friend class ListenerRegistry;
  Subscription(std::weak_ptr<ListenerSet> registry, std::uint64_t id);
  std::weak_ptr<ListenerSet> m_registry;
  std::uint64_t m_id = 0;
};

/// The listeners of one source, called with `Args...`. Held by a std::shared_ptr (subscribe() hands out weak
/// handles). notify() holds the registry's mutex while it calls, so subscribe() and Subscription::reset() from other
/// threads wait for it, and a listener must not subscribe to or unsubscribe from its own registry (it would deadlock).
template <class... Args>
class ListenerRegistry final : public ListenerSet {
 public:
  using Listener = std::function<void(Args...)>;

  /// Adds `listener` after those already subscribed. May throw std::bad_alloc (nothing is added then).
  [[nodiscard]] Subscription subscribe(Listener listener) {
    VTP_ASSERT(!weak_from_this().expired(), "a ListenerRegistry is owned by a std::shared_ptr");
    std::lock_guard lock(m_mutex);
    m_listeners.push_back({m_next_id + 1, std::move(listener)});
    return Subscription(weak_from_this(), ++m_next_id);
  }

  void remove(std::uint64_t id) override {
    std::lock_guard lock(m_mutex);
    std::erase_if(m_listeners, [&](const Entry& e) { return e.id == id; });
  }

  /// Calls every listener in subscription order. noexcept: a listener that throws ends the program rather than
  /// leaving an event half reported.
  void notify(Args... args) noexcept {
    std::lock_guard lock(m_mutex);
    for (const Entry& e : m_listeners) e.listener(args...);
  }

 private:
  struct Entry {
    std::uint64_t id;
    Listener listener;
  };
  std::mutex m_mutex;
  std::vector<Entry> m_listeners;
  std::uint64_t m_next_id = 0;
};

}  // namespace vtp::terrain
