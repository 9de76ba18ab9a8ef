// PMI_process_mapping formatting and the owner ranks encoded in MPICH's key names.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "launch/pmi1_keys.hpp"
#include "launch/pmi1_mapping.hpp"
#include "trainrt/error.hpp"

using namespace trainrt::launch::pmi1;

namespace {

// Expands a mapping the way MPICH 4.0's MPIR_NODEMAP_populate_ids_from_mapping does when the
// blocks cover every rank exactly (no wrap-around): blocks in order, each giving `ppn`
// consecutive ranks to each of its nodes.
std::vector<int> expand(const std::string& mapping) {
    REQUIRE(mapping.rfind("(vector", 0) == 0);
    std::vector<int> nodes;
    const char* cursor = mapping.c_str() + 7;
    int start = 0, count = 0, ppn = 0, used = 0;
    while (std::sscanf(cursor, ",(%d,%d,%d)%n", &start, &count, &ppn, &used) == 3) {
        for (int node = start; node < start + count; ++node)
            nodes.insert(nodes.end(), static_cast<std::size_t>(ppn), node);
        cursor += used;
    }
    CHECK(std::string(cursor) == ")");
    return nodes;
}

}  // namespace

TEST_CASE("pmi1 process mapping of block layouts", "[pmi1]") {
    CHECK(format_process_mapping({0}) == "(vector,(0,1,1))");
    CHECK(format_process_mapping({0, 0, 0, 0}) == "(vector,(0,1,4))");
    CHECK(format_process_mapping({0, 0, 1, 1}) == "(vector,(0,2,2))");
    CHECK(format_process_mapping({0, 0, 0, 1}) == "(vector,(0,1,3),(1,1,1))");
}

TEST_CASE("pmi1 process mapping renumbers node ids densely by first rank", "[pmi1]") {
    CHECK(format_process_mapping({7, 7, 3, 3}) == "(vector,(0,2,2))");
    CHECK(format_process_mapping({2, 5, 9}) == "(vector,(0,3,1))");
}

TEST_CASE("pmi1 process mapping of a cyclic layout lists every block", "[pmi1]") {
    CHECK(format_process_mapping({0, 1, 0, 1}) == "(vector,(0,2,1),(0,2,1))");
}

TEST_CASE("pmi1 process mapping expands back to the dense layout", "[pmi1]") {
    std::mt19937 random(42);
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<int> nodes(1 + random() % 40);
        for (auto& node : nodes) node = static_cast<int>(random() % 5) * 10;
        std::vector<int> dense;
        std::vector<int> seen;
        for (int node : nodes) {
            auto it = std::find(seen.begin(), seen.end(), node);
            if (it == seen.end()) it = seen.insert(seen.end(), node);
            dense.push_back(static_cast<int>(it - seen.begin()));
        }
        CHECK(expand(format_process_mapping(nodes)) == dense);
    }
}

TEST_CASE("pmi1 process mapping of no ranks is an error", "[pmi1]") {
    CHECK_THROWS_AS(format_process_mapping({}), trainrt::LaunchError);
}

TEST_CASE("pmi1 key owners follow MPICH 4.0's key names", "[pmi1]") {
    CHECK(mpich_key_owner("-bcast-1-0", 4) == 0);
    CHECK(mpich_key_owner("-bcast-12-3", 4) == 3);
    CHECK(mpich_key_owner("-bcast-2-1-seg-2/3", 4) == 1);
    CHECK(mpich_key_owner("-allgather-3-2", 4) == 2);
    CHECK(mpich_key_owner("-allgather-3-2-seg-1/2", 4) == 2);
    CHECK(mpich_key_owner("-allgather-shm-1-3", 4) == 3);
    CHECK(mpich_key_owner("-allgather-shm-1-3-seg-4/4", 4) == 3);
    CHECK(mpich_key_owner("hostname[1]", 4) == 1);
    CHECK(mpich_key_owner("P2-businesscard", 4) == 2);
}

TEST_CASE("pmi1 key owners: other names and out-of-range ranks give none", "[pmi1]") {
    CHECK_FALSE(mpich_key_owner("PMI_process_mapping", 4));
    CHECK_FALSE(mpich_key_owner("my-service", 4));
    CHECK_FALSE(mpich_key_owner("-bcast-1-", 4));
    CHECK_FALSE(mpich_key_owner("-bcast-1-4", 4));
    CHECK_FALSE(mpich_key_owner("-allgather-x-1", 4));
    CHECK_FALSE(mpich_key_owner("hostname[99999999999]", 4));
    CHECK_FALSE(mpich_key_owner("-bcast-1-0-seg-1", 4));
}
