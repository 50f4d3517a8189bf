// MaskIndex::subscribe: what the pair tracker (and any other listener) is told after each update of the index.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "vtp/physics/mask_index.h"

using namespace vtp::terrain;
using vtp::physics::IndexUpdate;
using vtp::physics::MaskIndex;

TEST_CASE("MaskIndex: listeners hear every update, in order, until their subscription ends") {
  auto world = World::create();
  REQUIRE(world.ok());
  auto index = MaskIndex::create(**world);
  REQUIRE(index.ok());

  std::vector<std::vector<ChunkCoord>> first_heard, second_heard;
  std::vector<int> order;
  Subscription first = (*index)->subscribe([&](const IndexUpdate& u) {
    first_heard.emplace_back(u.chunks.begin(), u.chunks.end());
    order.push_back(1);
    // The new masks are visible to queries from inside the listener.
    CHECK((*index)->masks({0, 0, 0}).tag != vtp::physics::MaskTag::kEmpty);
  });
  Subscription second = (*index)->subscribe([&](const IndexUpdate& u) {
    second_heard.emplace_back(u.chunks.begin(), u.chunks.end());
    order.push_back(2);
    CHECK(u.changed.size() == 1);  // CHECK, not REQUIRE: listeners run in a noexcept call
    if (u.changed.size() == 1) {
      CHECK(u.changed[0].min.x == 3);
      CHECK(u.changed[0].max.x == 4);
    }
  });

  SUBCASE("an edit of one voxel inside a chunk rebuilds that chunk alone, told to both listeners in turn") {
    REQUIRE((*world)->setVoxel({3, 3, 3}, {2, 255}).ok());
    REQUIRE(first_heard.size() == 1);
    CHECK(first_heard[0] == std::vector<ChunkCoord>{{0, 0, 0}});
    CHECK(second_heard == first_heard);
    CHECK(order == std::vector<int>{1, 2});
  }
  SUBCASE("an edit on a chunk corner rebuilds the eight chunks whose 10^3 boxes hold it, sorted (z, y, x)") {
    first.reset();
    second.reset();
    std::vector<ChunkCoord> heard;
    Subscription third =
        (*index)->subscribe([&](const IndexUpdate& u) { heard.assign(u.chunks.begin(), u.chunks.end()); });
    REQUIRE((*world)->setVoxel({0, 0, 0}, {2, 255}).ok());
    const std::vector<ChunkCoord> expected = {{-1, -1, -1}, {0, -1, -1}, {-1, 0, -1}, {0, 0, -1},
                                              {-1, -1, 0},  {0, -1, 0},  {-1, 0, 0},  {0, 0, 0}};
    CHECK(heard == expected);
    CHECK(first_heard.empty());  // reset subscriptions are never called again
    CHECK(second_heard.empty());
  }
  SUBCASE("a subscription may outlive its index") {
    index->reset();
    first.reset();  // unsubscribing from an index that is gone does nothing
    CHECK(first_heard.empty());
  }
}
