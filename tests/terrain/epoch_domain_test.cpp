#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "epoch_domain.h"

using vtp::terrain::EpochDomain;

namespace {

// Sets a flag when destroyed, so a test can see when reclamation frees it.
struct Tracked {
  explicit Tracked(bool& flag) : freed(flag) {}
  ~Tracked() { freed = true; }
  bool& freed;
};

const Tracked* tracked(bool& freed) { return new Tracked(freed); }

}  // namespace

TEST_CASE("EpochDomain: retired garbage is freed once no reader pinned before the retire remains") {
  EpochDomain domain;
  SUBCASE("garbage retired while nobody reads is freed at the next advance") {
    bool freed = false;
    domain.retire(tracked(freed));
    CHECK_FALSE(freed);
    domain.advanceAndReclaim();
    CHECK(freed);
    CHECK(domain.pendingCount() == 0);
  }
  SUBCASE("a reader pinned before the retire keeps the garbage alive until it unpins") {
    bool freed = false;
    const std::size_t slot = domain.pin();
    domain.retire(tracked(freed));
    domain.advanceAndReclaim();
    CHECK_FALSE(freed);
    domain.advanceAndReclaim();
    CHECK_FALSE(freed);
    domain.unpin(slot);
    domain.advanceAndReclaim();
    CHECK(freed);
  }
  SUBCASE("a reader pinned after the retire does not hold it back") {
    bool freed_a = false, freed_b = false;
    domain.retire(tracked(freed_a));
    domain.advanceAndReclaim();
    const std::size_t slot = domain.pin();
    domain.retire(tracked(freed_b));
    domain.advanceAndReclaim();
    CHECK(freed_a);
    CHECK_FALSE(freed_b);
    domain.unpin(slot);
    domain.advanceAndReclaim();
    CHECK(freed_b);
  }
  SUBCASE("every slot can be pinned at once and each pin gets its own slot") {
    std::vector<std::size_t> slots;
    for (std::size_t i = 0; i < EpochDomain::kSlots; ++i) slots.push_back(domain.pin());
    std::sort(slots.begin(), slots.end());
    CHECK(std::adjacent_find(slots.begin(), slots.end()) == slots.end());
    for (std::size_t s : slots) domain.unpin(s);
  }
}
