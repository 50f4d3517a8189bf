#include "epoch_domain.h"

#include <algorithm>
#include <functional>
#include <thread>

namespace vtp::terrain {
namespace {

// Spreads threads over the slots so pins rarely collide; constant-initialised (no dynamic initialiser).
thread_local std::size_t t_slot_hint = ~std::size_t{0};

std::size_t slotHint() {
  if (t_slot_hint == ~std::size_t{0}) t_slot_hint = std::hash<std::thread::id>{}(std::this_thread::get_id());
  return t_slot_hint;
}

}  // namespace

EpochDomain::~EpochDomain() {
  free(m_retired, ~std::uint64_t{0});
  free(m_unstamped, ~std::uint64_t{0});
}

void EpochDomain::free(std::vector<Retired>& list, std::uint64_t below) {
  std::erase_if(list, [&](const Retired& r) {
    if (r.epoch >= below) return false;
    r.destroy(r.object);
    return true;
  });
}

std::size_t EpochDomain::pin() const {
  const std::size_t start = slotHint();
  for (;;) {
    for (std::size_t i = 0; i < kSlots; ++i) {
      const std::size_t s = (start + i) % kSlots;
      std::uint64_t idle = 0;
      const std::uint64_t now = m_global.load(std::memory_order_seq_cst);
      if (m_slots[s].epoch.load(std::memory_order_relaxed) == 0 &&
          m_slots[s].epoch.compare_exchange_strong(idle, now, std::memory_order_seq_cst)) {
        return s;
      }
    }
    std::this_thread::yield();
  }
}

void EpochDomain::unpin(std::size_t slot) const { m_slots[slot].epoch.store(0, std::memory_order_release); }

void EpochDomain::advanceAndReclaim() {
  if (!m_unstamped.empty()) {
    // Everything retired since the last advance was unpublished before this increment.
    const std::uint64_t stamp = m_global.fetch_add(1, std::memory_order_seq_cst);
    for (Retired& r : m_unstamped) r.epoch = stamp;
    m_retired.insert(m_retired.end(), m_unstamped.begin(), m_unstamped.end());
    m_unstamped.clear();
  }
  if (m_retired.empty()) return;
  std::uint64_t oldest_pin = ~std::uint64_t{0};
  for (const Slot& s : m_slots) {
    // seq_cst, not acquire: this load and a reader's pin form a store-buffering pair with the unpublish above.
    const std::uint64_t e = s.epoch.load(std::memory_order_seq_cst);
    if (e != 0) oldest_pin = std::min(oldest_pin, e);
  }
  // A reader pinned at epoch e may hold anything retired with stamp >= e.
  free(m_retired, oldest_pin);
}

}  // namespace vtp::terrain
