// The restore's choice among the local checkpoints the nodes hold (local_inventory.hpp).
#include <catch2/catch.hpp>

#include "checkpoint/write/local_inventory.hpp"

using trainrt::checkpoint::drop_damaged;
using trainrt::checkpoint::Held;
using trainrt::checkpoint::verification_share;
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

// The files local ranks 0.. of a node wrote: rank_<r>.h5 for the world ranks `ranks`.
std::vector<std::string> owned_by(std::initializer_list<int> ranks) {
    std::vector<std::string> files;
    for (int rank : ranks) files.push_back("rank_0000" + std::to_string(rank) + ".h5");
    return files;
}

TEST_CASE("local inventory: a node's ranks share the checksums of the files it holds, each its own file",
          "[checkpoint]") {
    const Held held = on_node(5, "t5", {{0, 0}, {1, 1}, {2, 0}, {3, 1}});  // ranks 0, 1 here, copies of 2, 3
    const auto first = verification_share(held, 0, owned_by({0, 1})), second = verification_share(held, 1, owned_by({0, 1}));
    CHECK(first.size() == 2);
    CHECK(second.size() == 2);
    CHECK(first.count("rank_00000.h5") == 1);
    CHECK(first.count("rank_00002.h5") == 1);
    CHECK(second.at("rank_00003.h5") == "/local/rank_00001/checkpoint_000005/rank_00003.h5");
    // Ranks 2 and 3 on a node that holds copies of 0 and 1: each its own file, and one copy.
    const Held other = on_node(5, "t5", {{0, 2}, {1, 3}, {2, 2}, {3, 3}});
    const auto third = verification_share(other, 0, owned_by({2, 3})), fourth = verification_share(other, 1, owned_by({2, 3}));
    CHECK(third.count("rank_00002.h5") == 1);
    CHECK(fourth.count("rank_00003.h5") == 1);
    CHECK(third.size() + fourth.size() == 4);
    CHECK(third.size() == 2);
    CHECK(verification_share(held, 0, owned_by({0})).size() == 4);  // a rank alone on its node checks every file
    CHECK(verification_share(held, 2, owned_by({0, 1, 4})).size() == 1);
    const std::vector<std::string> eight = owned_by({0, 1, 4, 5, 6, 7, 8, 9});
    CHECK(verification_share(held, 3, eight).size() == 1);  // more ranks than files: one each, the rest none
    CHECK(verification_share(held, 5, eight).empty());
}

TEST_CASE("local inventory: a damaged file leaves its node's copy unused, a partner copy completes it",
          "[checkpoint]") {
    // Node A holds ranks 0,1 and copies of 2,3; node B holds 2,3 and copies of 0,1.
    std::vector<std::vector<Held>> by_node = {{on_node(5, "t5", {{0, 0}, {1, 1}, {2, 0}, {3, 1}})},
                                              {on_node(5, "t5", {{0, 2}, {1, 3}, {2, 2}, {3, 3}}),
                                               on_node(4, "t4", {{0, 2}, {1, 3}, {2, 2}, {3, 3}})}};
    const auto flat = [&] {
        std::vector<Held> all;
        for (const auto& node : by_node) all.insert(all.end(), node.begin(), node.end());
        return all;
    };
    drop_damaged(by_node, "checkpoint_000005@t5", {{0, "rank_00001.h5"}});
    CHECK(by_node[0][0].held.count("rank_00001.h5") == 0);
    CHECK(by_node[1][0].held.count("rank_00001.h5") == 1);  // the other node's copy stays
    auto chosen = newest_complete(flat(), 0);
    REQUIRE(chosen);
    CHECK(chosen->iteration == 5);
    // Both copies damaged: the older checkpoint, untouched (another key), is chosen.
    drop_damaged(by_node, "checkpoint_000005@t5", {{1, "rank_00001.h5"}});
    chosen = newest_complete(flat(), 0);
    REQUIRE(chosen);
    CHECK(chosen->iteration == 4);
    CHECK(by_node[1][1].held.size() == 4);
}
