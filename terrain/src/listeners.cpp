#include "vtp/terrain/listeners.h"

namespace vtp::terrain {

Subscription::Subscription(std::weak_ptr<ListenerSet> registry, std::uint64_t id)
    : m_registry(std::move(registry)), m_id(id) {}
Subscription::Subscription(Subscription&& other) noexcept
    : m_registry(std::move(other.m_registry)), m_id(std::exchange(other.m_id, 0)) {}
Subscription& Subscription::operator=(Subscription&& other) noexcept {
  if (this != &other) {
    reset();
    m_registry = std::move(other.m_registry);
    m_id = std::exchange(other.m_id, 0);
  }
  return *this;
}
Subscription::~Subscription() { reset(); }
void Subscription::reset() {
  if (auto registry = m_registry.lock(); registry && m_id != 0) registry->remove(m_id);
  m_registry.reset();
  m_id = 0;
}

}  // namespace vtp::terrain
