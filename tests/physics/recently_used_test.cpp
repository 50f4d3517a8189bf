// The water caches' RecentlyUsed (physics/src/cache/recently_used.h, white-box): hits, misses and which value a miss
// replaces, against a model that keeps the keys in order of use; a predicate that rejects a key's value; a fill that
// throws; values that stay where they are.
#include "cache/recently_used.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <list>
#include <random>
#include <stdexcept>
#include <vector>

using vtp::physics::water::RecentlyUsed;

namespace {

// What a kept value holds: its key, and how many times it was filled.
struct Value {
  int key = -1;
  int fills = 0;
};

}  // namespace

TEST_CASE("RecentlyUsed: hits and misses follow a model of the keys in order of use and values stay in their slots") {
  constexpr std::size_t kCapacity = 8;
  RecentlyUsed<int, Value, kCapacity> kept;
  std::list<int> model;  // the kept keys, the most recently used first
  std::mt19937 rng(7);
  std::vector<const Value*> addresses;
  int misses = 0, evictions = 0;
  for (int step = 0; step < 20000; ++step) {
    // Keys from a range a little larger than the capacity, so both hits and evictions are common.
    const int key = int(std::uniform_int_distribution<int>(0, 11)(rng));
    const auto in_model = std::find(model.begin(), model.end(), key);
    const bool expect_hit = in_model != model.end();
    int evicted = -1;
    if (expect_hit) {
      model.erase(in_model);
    } else if (model.size() == kCapacity) {
      evicted = model.back();
      model.pop_back();
    }
    model.push_front(key);
    bool filled = false;
    int old_key = -2;
    const Value& v = kept.get(key, [&](const Value& x) { return x.key == key; }, [&](Value& x) {
      filled = true;
      old_key = x.key;
      x.key = key;
      ++x.fills;
    });
    REQUIRE(filled == !expect_hit);
    CHECK(v.key == key);
    if (filled) {
      ++misses;
      // A new slot holds a default value; a reused one the value of the least recently used key.
      CHECK(old_key == evicted);
      if (evicted >= 0) ++evictions;
    }
    if (std::find(addresses.begin(), addresses.end(), &v) == addresses.end()) addresses.push_back(&v);
  }
  CHECK(kept.size() == kCapacity);
  CHECK(addresses.size() == kCapacity);  // every value stayed in its slot
  CHECK(misses > 1000);
  CHECK(evictions > 1000);
  std::vector<int> keys;
  kept.forEach([&](const Value& v, std::uint64_t) { keys.push_back(v.key); });
  std::vector<int> want(model.begin(), model.end());
  std::sort(keys.begin(), keys.end());
  std::sort(want.begin(), want.end());
  CHECK(keys == want);
}

TEST_CASE("RecentlyUsed: a value the predicate rejects is filled again in the least recently used slot") {
  RecentlyUsed<int, Value, 2> kept;
  const auto fill = [](int key) { return [key](Value& x) { x.key = key, ++x.fills; }; };
  const auto any = [](const Value&) { return true; };
  Value& a = kept.get(1, any, fill(1));
  Value& b = kept.get(2, any, fill(2));
  CHECK(&kept.get(1, any, fill(1)) == &a);  // a hit: 2 is now the least recently used
  // Key 1 again, but its value does not match (a hash collision in the hull cache): a miss, which replaces key 2's.
  Value& c = kept.get(1, [](const Value&) { return false; }, fill(10));
  CHECK(&c == &b);
  CHECK(c.key == 10);
  CHECK(c.fills == 2);
  CHECK(a.key == 1);
  // Key 1 now has two slots; a lookup finds the one the predicate accepts.
  CHECK(&kept.get(1, [](const Value& x) { return x.key == 1; }, fill(99)) == &a);
  CHECK(&kept.get(1, [](const Value& x) { return x.key == 10; }, fill(99)) == &c);
}

TEST_CASE("RecentlyUsed: a fill that throws leaves its slot under no key, and the slot is filled first next") {
  RecentlyUsed<int, Value, 3> kept;
  const auto any = [](const Value&) { return true; };
  const auto fill = [](int key) { return [key](Value& x) { x.key = key, ++x.fills; }; };
  for (int key = 1; key <= 3; ++key) kept.get(key, any, fill(key));
  // Key 4 replaces key 1 (the least recently used); its fill throws half way.
  CHECK_THROWS_AS(kept.get(4, any, [](Value& x) {
    x.key = 4;
    throw std::runtime_error("fill failed");
  }),
                  std::runtime_error);
  std::vector<int> keys;
  kept.forEach([&](const Value& v, std::uint64_t) { keys.push_back(v.key); });
  std::sort(keys.begin(), keys.end());
  CHECK(keys == std::vector<int>{2, 3});  // neither 1 nor the half-filled 4 is kept
  // Key 1, whose slot the failed fill took, is a miss (its half-filled value is not found under it), and takes the
  // broken slot, not key 2's (now the least recently used of those kept).
  bool filled = false;
  Value& again = kept.get(1, any, [&](Value& x) { filled = true, x.key = 1; });
  CHECK(filled);
  CHECK(again.key == 1);
  keys.clear();
  kept.forEach([&](const Value& v, std::uint64_t) { keys.push_back(v.key); });
  std::sort(keys.begin(), keys.end());
  CHECK(keys == std::vector<int>{1, 2, 3});
}
