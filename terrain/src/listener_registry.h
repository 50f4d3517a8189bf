#pragma once
// Listeners subscribed to a world's change events. Shared with Subscription handles (weak), so a handle may outlive
// its world. notify() holds the mutex while calling, so a reset() from another thread returns only once the listener
// can no longer run.

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "vtp/terrain/world.h"

namespace vtp::terrain {

class ListenerRegistry {
 public:
  std::uint64_t add(ChangeListener listener) {
    std::lock_guard lock(m_mutex);
    m_listeners.push_back({++m_next_id, std::move(listener)});
    return m_next_id;
  }
  void remove(std::uint64_t id) {
    std::lock_guard lock(m_mutex);
    std::erase_if(m_listeners, [&](const Entry& e) { return e.id == id; });
  }
  // noexcept: a listener that throws ends the program rather than leaving an edit half reported.
  void notify(std::span<const ChangeEvent> events) noexcept {
    if (events.empty()) return;
    std::lock_guard lock(m_mutex);
    for (const Entry& e : m_listeners) e.listener(events);
  }

 private:
  struct Entry {
    std::uint64_t id;
    ChangeListener listener;
  };
  std::mutex m_mutex;
  std::vector<Entry> m_listeners;
  std::uint64_t m_next_id = 0;
};

}  // namespace vtp::terrain
