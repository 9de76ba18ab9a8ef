// tune/pbt: population based training's boundaries, quantiles, donor and exploration.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "tune/pbt.hpp"
#include "tune/search_space.hpp"

using namespace trainrt::tune;

TEST_CASE("PBT's boundaries: every interval below train.epochs, then train.epochs") {
    CHECK(pbt_boundaries(4, 10) == std::vector<std::int64_t>{4, 8, 10});
    CHECK(pbt_boundaries(5, 10) == std::vector<std::int64_t>{5, 10});
    CHECK(pbt_boundaries(20, 10) == std::vector<std::int64_t>{10});
    CHECK(pbt_next_boundary({4, 8, 10}, 4) == 8);
    CHECK(pbt_next_boundary({4, 8, 10}, 5) == 8);  // a copied state saved between boundaries
    CHECK(pbt_next_boundary({4, 8, 10}, 10) == 0);
}

TEST_CASE("PBT's quantiles: ceil(n x fraction) worst and best trials, at most n/2, none below 2 scores") {
    const std::vector<PbtScore> scores{{0, 0.5}, {1, 0.9}, {2, 0.1}, {3, 0.7}};
    PbtQuantiles split = pbt_quantiles(scores, 0.25, true);
    CHECK(split.lower == std::vector<std::size_t>{2});
    CHECK(split.upper == std::vector<std::size_t>{1});
    split = pbt_quantiles(scores, 0.25, false);  // minimizing: the largest values are the worst
    CHECK(split.lower == std::vector<std::size_t>{1});
    CHECK(split.upper == std::vector<std::size_t>{2});
    split = pbt_quantiles(scores, 0.5, true);
    CHECK(split.lower == std::vector<std::size_t>{2, 0});
    CHECK(split.upper == std::vector<std::size_t>{1, 3});
    CHECK(pbt_quantiles({{0, 0.5}, {1, 0.9}, {2, 0.1}}, 0.5, true).lower.size() == 1);  // 3 / 2 = 1
    CHECK(pbt_quantiles({{0, 0.5}}, 0.5, true).lower.empty());
}

TEST_CASE("PBT's draws depend on (seed, trial, boundary) only") {
    CHECK(pbt_draw_seed(0, 1, 4) == pbt_draw_seed(0, 1, 4));
    CHECK(pbt_draw_seed(0, 1, 4) != pbt_draw_seed(0, 2, 4));
    CHECK(pbt_draw_seed(0, 1, 4) != pbt_draw_seed(0, 1, 8));
    CHECK(pbt_draw_seed(0, 1, 4) != pbt_draw_seed(1, 1, 4));
    std::set<std::size_t> picked;
    for (std::uint64_t seed = 0; seed < 64; ++seed) picked.insert(pbt_pick_donor({3, 5}, pbt_draw_seed(seed, 0, 2)));
    CHECK(picked == std::set<std::size_t>{3, 5});
}

TEST_CASE("PBT's exploration: a number x0.8 or x1.2 within its bounds, a choice a neighbour, or drawn anew") {
    const std::vector<Domain> space{parse_domain("train.lr", "loguniform(0.001, 0.1)", "t:1"),
                                    parse_domain("train.batch_size", "choice(32, 64, 128)", "t:2"),
                                    parse_domain("train.layers", "randint(1, 9)", "t:3")};
    const TrialValues donor{{"train.lr", "0.01"}, {"train.batch_size", "64"}, {"train.layers", "4"}};
    std::set<std::string> lrs, sizes, layers;
    for (std::uint64_t seed = 0; seed < 64; ++seed) {
        const TrialValues explored = pbt_explore(space, donor, 0.0, pbt_draw_seed(seed, 0, 2));
        REQUIRE(explored.size() == 3);
        lrs.insert(explored[0].second), sizes.insert(explored[1].second), layers.insert(explored[2].second);
        CHECK(explored == pbt_explore(space, donor, 0.0, pbt_draw_seed(seed, 0, 2)));  // the same draw, the same values
    }
    CHECK(lrs == std::set<std::string>{real_text(0.01 * 0.8), real_text(0.01 * 1.2)});
    CHECK(sizes == std::set<std::string>{"32", "128"});
    CHECK(layers == std::set<std::string>{"3", "5"});  // 4 x 0.8 = 3.2 -> 3, 4 x 1.2 = 4.8 -> 5
    // At a bound: clamped into the domain.
    const TrialValues high{{"train.lr", "0.1"}, {"train.batch_size", "128"}, {"train.layers", "8"}};
    for (std::uint64_t seed = 0; seed < 16; ++seed) {
        const TrialValues explored = pbt_explore(space, high, 0.0, pbt_draw_seed(seed, 1, 2));
        CHECK(std::stod(explored[0].second) <= 0.1);
        CHECK((explored[1].second == "128" || explored[1].second == "64"));
        CHECK(std::stoll(explored[2].second) <= 8);
    }
    // resample_probability 1: every value drawn from its domain.
    for (std::uint64_t seed = 0; seed < 16; ++seed) {
        const TrialValues drawn = pbt_explore(space, donor, 1.0, pbt_draw_seed(seed, 2, 2));
        CHECK(std::stod(drawn[0].second) >= 0.001);
        CHECK(std::stod(drawn[0].second) <= 0.1);
        CHECK(std::stoll(drawn[2].second) >= 1);
        CHECK(std::stoll(drawn[2].second) < 9);
    }
}

TEST_CASE("PBT by training_iteration: a trial's end is the base job's smallest training_iteration>=N, rounded up") {
    using trainrt::runtime::StopCriterion;
    CHECK(pbt_iteration_end({{"done", 1}, {"training_iteration", 10}}) == 10);
    CHECK(pbt_iteration_end({{"training_iteration", 20}, {"training_iteration", 12.5}}) == 13);
    CHECK(pbt_iteration_end({{"training_iteration", 0}}) == 1);  // met at the first report: one boundary
    CHECK_FALSE(pbt_iteration_end({{"done", 1}, {"time_total_s", 60}}).has_value());
    CHECK_FALSE(pbt_iteration_end({}).has_value());
    CHECK(pbt_boundaries(5, *pbt_iteration_end({{"training_iteration", 10}})) == std::vector<std::int64_t>{5, 10});
}

TEST_CASE("PBT scores a trial against each other trial's latest score at or before the same time") {
    std::vector<trainrt::runlog::TrialRecord> trials(4);
    for (std::size_t i = 0; i < trials.size(); ++i) trials[i].index = i;
    trials[1].decisions = {{5, 0.5}, {10, 0.9}};  // ran ahead: its score at 5 counts
    trials[2].decisions = {{5, 0.2}, {10, 0.3}, {5, 0.25}};  // copied back to 5 and decided there again
    trials[3].decisions = {{10, 0.8}};  // scored only later: left out
    const std::vector<PbtScore> at_5 = pbt_scores_at(trials, 0, 0.4, 5);
    REQUIRE(at_5.size() == 3);
    CHECK((at_5[0].trial == 0 && at_5[0].value == 0.4));  // its own first
    CHECK((at_5[1].trial == 1 && at_5[1].value == 0.5));
    CHECK((at_5[2].trial == 2 && at_5[2].value == 0.25));
    const std::vector<PbtScore> at_10 = pbt_scores_at(trials, 0, 0.4, 10);
    REQUIRE(at_10.size() == 4);
    CHECK(at_10[1].value == 0.9);
    CHECK(at_10[2].value == 0.25);  // its latest at or before 10
    CHECK(at_10[3].value == 0.8);
    CHECK(pbt_scores_at(trials, 3, 0.1, 4).size() == 1);  // nobody else scored by 4
}

TEST_CASE("PBT's exploration: a value that is not one of its choice's is drawn from the choice, as Ray's") {
    const std::vector<Domain> space{parse_domain("train.factor", "choice(1, 2)", "t:1")};
    std::set<std::string> drawn;
    for (std::uint64_t seed = 0; seed < 32; ++seed)
        drawn.insert(pbt_explore(space, {{"train.factor", "7"}}, 0.0, pbt_draw_seed(seed, 0, 5))[0].second);
    CHECK(drawn == std::set<std::string>{"1", "2"});
}

TEST_CASE("PBT perturbs a function mutation's value as Ray does: x0.8 or x1.2, unbounded, integers truncated") {
    // function(...) is only called to draw anew (resample, or a value that is not a number); the
    // perturbation of a number needs no Python.
    const std::vector<Domain> space{parse_domain("train.lr", "function(gASVAAAA)", "t:1"),
                                    parse_domain("train.width", "function(gASVAAAA)", "t:2")};
    CHECK(space[0].kind == DomainKind::function);
    CHECK(space[0].text() == "function(gASVAAAA)");
    std::set<std::string> lrs, widths;
    for (std::uint64_t seed = 0; seed < 32; ++seed) {
        const TrialValues explored = pbt_explore(space, {{"train.lr", "0.5"}, {"train.width", "7"}}, 0.0,
                                                 pbt_draw_seed(seed, 0, 5));
        lrs.insert(explored[0].second), widths.insert(explored[1].second);
    }
    CHECK(lrs == std::set<std::string>{real_text(0.5 * 0.8), real_text(0.5 * 1.2)});
    CHECK(widths == std::set<std::string>{"5", "8"});  // 7 x 0.8 = 5.6 -> 5, 7 x 1.2 = 8.4 -> 8
    CHECK_THROWS_WITH(parse_domain("train.lr", "function()", "t:3"), Catch::Contains("function() takes one argument"));
}
