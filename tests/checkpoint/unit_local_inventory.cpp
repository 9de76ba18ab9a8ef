// The restore's choice among the local checkpoints the nodes hold (local_inventory.hpp).
#include <catch2/catch.hpp>

#include "checkpoint/local_inventory.hpp"

using trainrt::checkpoint::Held;
using trainrt::checkpoint::needs_partner_copies;
using trainrt::checkpoint::newest_complete;

namespace {

// What one node holds of checkpoint `iteration` (created `created`) of a 4-rank run: `files` as
// rank -> the rank directory it lies in on that node.
Held on_node(std::int64_t iteration, const std::string& created, std::map<int, int> files) {
    const std::string name = "checkpoint_00000" + std::to_string(iteration);
    Held h{name + "@" + created, name, iteration, 4, "/local/rank_00000/" + name + "/manifest.json",
           {"rank_00000.h5", "rank_00001.h5", "rank_00002.h5", "rank_00003.h5"}, {}};
    for (const auto& [rank, dir] : files) {
        const std::string file = "rank_0000" + std::to_string(rank) + ".h5";
        h.held[file] = "/local/rank_0000" + std::to_string(dir) + "/" + name + "/" + file;
    }
    return h;
}

}  // namespace

TEST_CASE("local inventory: the newest checkpoint whose every file some node holds", "[checkpoint]") {
    // Two nodes of 2 ranks; node A holds ranks 0,1 and the partner copies of 2,3.
    const std::vector<Held> all = {
        on_node(5, "t5", {{0, 0}, {1, 1}, {2, 0}, {3, 1}}), on_node(5, "t5", {{2, 2}, {3, 3}}),
        on_node(6, "t6", {{0, 0}, {1, 1}}),  // 6 reached node A only: incomplete
    };
    const auto chosen = newest_complete(all, 0);
    REQUIRE(chosen);
    CHECK(chosen->iteration == 5);
    CHECK_FALSE(needs_partner_copies(*chosen, all));  // every file in its writer's directory somewhere
    CHECK_FALSE(newest_complete(all, 6));              // not older than the run directory's newest
}

TEST_CASE("local inventory: a lost node's files from partner copies", "[checkpoint]") {
    // Node B (ranks 2,3) is gone; node A kept copies of its files in its own ranks' directories.
    const std::vector<Held> all = {on_node(7, "t7", {{0, 0}, {1, 1}, {2, 0}, {3, 1}})};
    const auto chosen = newest_complete(all, 0);
    REQUIRE(chosen);
    CHECK(chosen->iteration == 7);
    CHECK(needs_partner_copies(*chosen, all));
    // Without the copies (local level only) nothing is complete.
    CHECK_FALSE(newest_complete({on_node(7, "t7", {{0, 0}, {1, 1}})}, 0));
}

TEST_CASE("local inventory: one name saved by two attempts is two checkpoints", "[checkpoint]") {
    // Attempt 1 saved checkpoint 8 on node A only before dying; attempt 2 saved a checkpoint 8 of
    // its own everywhere. Files of the two never mix.
    const std::vector<Held> all = {on_node(8, "old", {{0, 0}, {1, 1}}), on_node(8, "new", {{0, 0}, {1, 1}}),
                                   on_node(8, "new", {{2, 2}, {3, 3}}), on_node(8, "old", {{3, 3}})};
    const auto chosen = newest_complete(all, 0);
    REQUIRE(chosen);
    CHECK(chosen->key == "checkpoint_000008@new");
}

TEST_CASE("local inventory: the nodes' lists travel as JSON unchanged", "[checkpoint]") {
    const Held h = on_node(3, "t3", {{0, 0}, {2, 1}});
    const Held back = trainrt::checkpoint::held_from_json(trainrt::checkpoint::to_json(h));
    CHECK(back.key == h.key);
    CHECK(back.iteration == 3);
    CHECK(back.world_size == 4);
    CHECK(back.files == h.files);
    CHECK(back.held == h.held);
}
