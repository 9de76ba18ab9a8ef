// tune/hyperband: HyperBand's brackets, milestones and sizes, each against what Ray 2.x's
// HyperBandScheduler computes for the same max_t and reduction_factor (its on_trial_add and
// _Bracket.successive_halving run for 40 trials), and which trials a halving keeps.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tune/hyperband.hpp"

using namespace trainrt::tune;

namespace {

std::vector<std::size_t> brackets_of_first(const HyperBandShape& shape, std::size_t trials) {
    std::vector<std::size_t> brackets;
    for (std::size_t i = 0; i < trials; ++i) brackets.push_back(hyperband_bracket(shape, i).bracket);
    return brackets;
}

}  // namespace

TEST_CASE("HyperBand's brackets as Ray fills them: max_t 200, eta 3") {
    const HyperBandShape shape{200, 3};
    CHECK(hyperband_brackets_per_band(shape) == 6);
    CHECK(brackets_of_first(shape, 40) ==
          std::vector<std::size_t>{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
                                   2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3});
    CHECK(hyperband_bracket(shape, 39).s == 3);
    CHECK(hyperband_milestones(shape, 0) == std::vector<std::int64_t>{200});
    CHECK(hyperband_milestones(shape, 1) == std::vector<std::int64_t>{66, 198});
    CHECK(hyperband_milestones(shape, 2) == std::vector<std::int64_t>{22, 66, 198});
    CHECK(hyperband_milestones(shape, 4) == std::vector<std::int64_t>{2, 6, 18, 54, 162});
    CHECK(hyperband_sizes(shape, 0) == std::vector<std::size_t>{6});
    CHECK(hyperband_sizes(shape, 3) == std::vector<std::size_t>{41, 14, 5, 2});
    CHECK(hyperband_sizes(shape, 4) == std::vector<std::size_t>{98, 33, 11, 4, 2});
}

TEST_CASE("HyperBand: a bracket whose first milestone would be 0 is skipped, and the next band begins") {
    const HyperBandShape shape{16, 3};  // s = 3: int(16 / 27) = 0
    CHECK(hyperband_brackets_per_band(shape) == 4);
    CHECK(brackets_of_first(shape, 40) ==
          std::vector<std::size_t>{0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
                                   2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5});
    CHECK(hyperband_bracket(shape, 22).s == 0);
    CHECK(hyperband_milestones(shape, 1) == std::vector<std::int64_t>{5, 15});
    CHECK(hyperband_milestones(shape, 2) == std::vector<std::int64_t>{1, 3, 9});
    CHECK(hyperband_sizes(shape, 2) == std::vector<std::size_t>{12, 4, 2});
}

TEST_CASE("HyperBand with eta 2 and with eta 3 at max_t 9") {
    const HyperBandShape two{10, 2};
    CHECK(brackets_of_first(two, 40) ==
          std::vector<std::size_t>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3,
                                   3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7});
    CHECK(hyperband_milestones(two, 3) == std::vector<std::int64_t>{1, 2, 4, 8});
    CHECK(hyperband_sizes(two, 3) == std::vector<std::size_t>{8, 4, 2, 1});
    const HyperBandShape three{9, 3};
    CHECK(hyperband_milestones(three, 2) == std::vector<std::int64_t>{1, 3, 9});
    CHECK(hyperband_sizes(three, 2) == std::vector<std::size_t>{9, 3, 1});
}

TEST_CASE("HyperBand keeps the best of a bracket, ties going to the later trial as in Ray's sort") {
    const std::vector<TrialScore> scores{{0, 0.5}, {1, 0.9}, {2, 0.1}, {3, 0.9}, {4, 0.3}};
    CHECK(hyperband_keep(scores, 2, true) == std::vector<std::size_t>{1, 3});
    CHECK(hyperband_keep(scores, 2, false) == std::vector<std::size_t>{2, 4});
    CHECK(hyperband_keep(scores, 1, true) == std::vector<std::size_t>{3});
    CHECK(hyperband_keep(scores, 9, true) == std::vector<std::size_t>{0, 1, 2, 3, 4});  // a bracket not filled
    CHECK(hyperband_keep(scores, 0, true).empty());
}
