// tune/pb2: PB2's observations from the trials' decisions and the bandit's choice of new values.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "trainrt/error.hpp"
#include "tune/pb2.hpp"
#include "tune/search_space.hpp"

using namespace trainrt::tune;
using trainrt::runlog::RungDecision;
using trainrt::runlog::TrialRecord;
using trainrt::runlog::TrialValues;

namespace {

RungDecision decided(std::int64_t rung, double value, double lr, std::int64_t donor = -1) {
    RungDecision decision{rung, value, 0, 1, donor < 0, donor, {}};
    decision.values = {{"train.lr", std::to_string(lr)}};
    return decision;
}

// Trials whose score grows by 1 - (lr - 0.7)^2 per unit of time: the best lr is 0.7.
std::vector<TrialRecord> peaked_population() {
    std::vector<TrialRecord> trials;
    const double rates[] = {0.05, 0.2, 0.35, 0.5, 0.6, 0.8, 0.9, 1.0};
    for (std::size_t i = 0; i < 8; ++i) {
        TrialRecord trial;
        trial.index = i, trial.name = "trial_000" + std::to_string(i);
        trial.values = {{"train.lr", std::to_string(rates[i])}};
        const double gain = 1 - (rates[i] - 0.7) * (rates[i] - 0.7);
        for (std::int64_t t = 5; t <= 15; t += 5) trial.decisions.push_back(decided(t, gain * static_cast<double>(t), rates[i]));
        trials.push_back(trial);
    }
    return trials;
}

}  // namespace

TEST_CASE("PB2 explores bounded numeric domains and refuses the others in one line") {
    const std::vector<Domain> space{parse_domain("train.lr", "loguniform(1e-4, 1e-1)", "s.ini:3"),
                                    parse_domain("train.width", "randint(8, 64)", "s.ini:4")};
    const std::vector<Pb2Bound> bounds = pb2_bounds(space);
    REQUIRE(bounds.size() == 2);
    CHECK(bounds[0].low == Approx(std::log(1e-4)));  // a loguniform domain is modelled in its logarithm
    CHECK(bounds[1].high == 64);
    const std::vector<Domain> choice{parse_domain("train.opt", "choice(sgd, adam)", "s.ini:5")};
    CHECK_THROWS_WITH(pb2_bounds(choice), Catch::Contains("train.opt") && Catch::Contains("s.ini:5") &&
                                              Catch::Contains("uniform, loguniform or randint"));
}

TEST_CASE("PB2's observations: each interval's change of score per unit of time, from the donor's score after a copy") {
    const std::vector<Domain> space{parse_domain("train.lr", "uniform(0, 1)", "s.ini:3")};
    const std::vector<Pb2Bound> bounds = pb2_bounds(space);
    TrialRecord donor, copier;
    donor.index = 0, copier.index = 1;
    donor.decisions = {decided(5, 10, 0.5), decided(10, 20, 0.5)};
    copier.decisions = {decided(5, 2, 0.1, 0), decided(10, 22, 0.4)};  // copied the donor (10) at 5, went on with 0.4
    const std::vector<Pb2Observation> data = pb2_observations({donor, copier}, bounds, true);
    REQUIRE(data.size() == 2);
    CHECK(data[0].change == Approx(2.0));  // (20 - 10) / 5
    CHECK(data[1].score_before == Approx(10));  // the donor's, not its own 2
    CHECK(data[1].change == Approx(2.4));
    CHECK(data[1].values == std::vector<double>{0.4});
    const std::vector<Pb2Observation> minimised = pb2_observations({donor}, bounds, false);
    CHECK(minimised[0].change == Approx(-2.0));  // mode min: a falling metric is an improvement
}

TEST_CASE("PB2 picks values where the model predicts the largest improvement, the same for the same draw") {
    const std::vector<Domain> space{parse_domain("train.lr", "uniform(0, 1)", "s.ini:3")};
    const std::vector<Pb2Bound> bounds = pb2_bounds(space);
    const std::vector<TrialRecord> trials = peaked_population();
    const TrialValues donor{{"train.lr", "1.0"}};
    const TrialValues first = pb2_explore(bounds, donor, trials, 3, 7, 15, true, 42);
    CHECK(first == pb2_explore(bounds, donor, trials, 3, 7, 15, true, 42));
    const double lr = std::stod(first.at(0).second);
    CHECK(lr > 0.5);
    CHECK(lr < 0.9);
}

TEST_CASE("PB2 keeps the donor's values without two observations, and writes a domain's own values") {
    const std::vector<Domain> space{parse_domain("train.width", "randint(8, 64)", "s.ini:4")};
    const std::vector<Pb2Bound> bounds = pb2_bounds(space);
    const TrialValues donor{{"train.width", "16"}};
    CHECK(pb2_explore(bounds, donor, {}, 0, 1, 5, true, 7) == donor);
    std::vector<TrialRecord> trials = peaked_population();  // its train.lr values become widths 8..64 here
    for (TrialRecord& trial : trials)
        for (RungDecision& decision : trial.decisions)
            decision.values = {{"train.width", std::to_string(8 + static_cast<int>(56 * std::stod(decision.values[0].second)))}};
    const std::string width = pb2_explore(bounds, donor, trials, 1, 7, 15, true, 7).at(0).second;
    CHECK(width.find_first_not_of("0123456789") == std::string::npos);
    CHECK(std::stoi(width) >= 8);
    CHECK(std::stoi(width) <= 63);  // randint's high is excluded
}
