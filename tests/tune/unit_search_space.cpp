// tune/search_space and tune/native_search: domains parse as Ray Tune writes them, malformed ones
// are one line naming the key and FILE:LINE, draws stay in their domain and are a function of
// (seed, trial index), grids enumerate as a cartesian product, and num_samples is checked
// against the grid.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "trainrt/error.hpp"
#include "tune/native_search.hpp"
#include "tune/optuna_search.hpp"
#include "tune/search_space.hpp"

using namespace trainrt;
using namespace trainrt::tune;

namespace {

Domain parse(const std::string& text, const std::string& key = "train.lr") { return parse_domain(key, text, "sweep.ini:7"); }

std::string error_of(const std::string& text, const std::string& key = "train.lr") {
    try {
        parse(text, key);
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "";
}

const OptionSpec& spec(const std::string& key) {
    static const std::vector<OptionSpec> specs = config::builtin_options();
    for (const OptionSpec& s : specs)
        if (s.key == key) return s;
    throw std::runtime_error("no spec " + key);
}

}  // namespace

TEST_CASE("domains parse as Ray Tune names them") {
    const Domain lr = parse(" loguniform( 1e-4 , 1e-1 ) ");
    CHECK(lr.kind == DomainKind::loguniform);
    CHECK(lr.low == 1e-4);
    CHECK(lr.high == 1e-1);
    CHECK(lr.text() == "loguniform(0.0001, 0.1)");
    const Domain batch = parse("choice(32, 64, 128)", "train.batch_size");
    CHECK(batch.values == std::vector<std::string>{"32", "64", "128"});
    CHECK(parse("qrandint(8, 64, 8)").q == 8);
    CHECK(parse("randn()").high == 1);
    CHECK(parse("grid(none, global)").enumerated());
}

TEST_CASE("a malformed domain is one line naming the key and where it was written") {
    CHECK_THAT(error_of("choice()"), Catch::Contains("train.lr (sweep.ini:7)") && Catch::Contains("empty"));
    CHECK_THAT(error_of("uniform(1, 1)"), Catch::Contains("low < high"));
    CHECK_THAT(error_of("loguniform(0, 1)"), Catch::Contains("low > 0"));
    CHECK_THAT(error_of("loguniform(-1, 1)"), Catch::Contains("low > 0"));
    CHECK_THAT(error_of("quniform(0, 1)"), Catch::Contains("takes 3 numbers"));
    CHECK_THAT(error_of("randint(0.5, 4)"), Catch::Contains("takes integers"));
    CHECK_THAT(error_of("logunifrom(1e-4, 1e-1)"), Catch::Contains("did you mean 'loguniform'?"));
    CHECK_THAT(error_of("0.01"), Catch::Contains("is not a domain"));
    CHECK_THAT(error_of("uniform(a, 1)"), Catch::Contains("sweep.ini:7"));
    CHECK(error_of("choice(1,,2)").find("empty value") != std::string::npos);
    for (const char* bad : {"choice()", "uniform(1, 1)", "0.01"}) CHECK(error_of(bad).find('\n') == std::string::npos);
}

TEST_CASE("draws stay inside their domain") {
    std::mt19937_64 generator(3);
    const Domain lr = parse("loguniform(1e-4, 1e-1)"), q = parse("quniform(0, 1, 0.25)"), ints = parse("randint(2, 5)");
    const Domain qints = parse("qrandint(8, 64, 8)");
    std::set<std::string> int_values, qint_values;
    double log_sum = 0;
    for (int i = 0; i < 2000; ++i) {
        const double v = std::stod(lr.sample(generator));
        CHECK((v >= 1e-4 && v <= 1e-1));
        log_sum += std::log10(v);
        const double k = std::stod(q.sample(generator)) / 0.25;
        CHECK(k == std::round(k));
        int_values.insert(ints.sample(generator));
        qint_values.insert(qints.sample(generator));
    }
    CHECK(log_sum / 2000 == Approx(-2.5).margin(0.1));  // uniform in the exponent
    CHECK(int_values == std::set<std::string>{"2", "3", "4"});  // randint's high is excluded
    CHECK(qint_values.count("64") == 1);                         // qrandint's is included
    for (const std::string& v : qint_values) CHECK(std::stoi(v) % 8 == 0);
}

TEST_CASE("a trial's values are a function of the seed and its index") {
    const std::vector<Domain> space{parse("loguniform(1e-4, 1e-1)"), parse("choice(32, 64, 128)", "train.batch_size")};
    CHECK(native_trial(space, SearchKind::random, 0, 5) == native_trial(space, SearchKind::random, 0, 5));
    CHECK(native_trial(space, SearchKind::random, 0, 5) != native_trial(space, SearchKind::random, 0, 6));
    CHECK(native_trial(space, SearchKind::random, 0, 5) != native_trial(space, SearchKind::random, 1, 5));
    const TrialValues values = native_trial(space, SearchKind::random, 0, 5);
    REQUIRE(values.size() == 2);
    CHECK(values[0].first == "train.lr");
    CHECK(values[1].first == "train.batch_size");
}

TEST_CASE("grids enumerate every point; num_samples is checked against them") {
    const std::vector<Domain> space{parse("grid(0.1, 0.01)"), parse("choice(none, global)", "data.shuffle")};
    CHECK(grid_points(space, SearchKind::grid) == 4);
    CHECK(trial_count(space, SearchKind::grid, 0, "sweep.ini:3") == 4);
    std::set<TrialValues> seen;
    for (std::size_t i = 0; i < 4; ++i) seen.insert(native_trial(space, SearchKind::grid, 0, i));
    CHECK(seen.size() == 4);
    CHECK(native_trial(space, SearchKind::grid, 0, 1) == TrialValues{{"train.lr", "0.1"}, {"data.shuffle", "global"}});
    CHECK_THROWS_WITH(trial_count(space, SearchKind::grid, 6, "sweep.ini:3"),
                      Catch::Contains("num_samples = 6 (sweep.ini:3)") && Catch::Contains("4 points"));
    // random search: the grid's 2 points each get the same number of trials; the choice is drawn
    CHECK(grid_points(space, SearchKind::random) == 2);
    CHECK(trial_count(space, SearchKind::random, 6, "x") == 6);
    CHECK_THROWS_WITH(trial_count(space, SearchKind::random, 5, "x"), Catch::Contains("use 4 or 6"));
    for (std::size_t i = 0; i < 6; ++i)
        CHECK(native_trial(space, SearchKind::random, 0, i)[0].second == (i % 2 == 0 ? "0.1" : "0.01"));
    const std::vector<Domain> continuous{parse("uniform(0, 1)")};
    CHECK_THROWS_WITH(trial_count(continuous, SearchKind::grid, 0, "x"), Catch::Contains("search = grid enumerates"));
    CHECK_THROWS_WITH(trial_count(space, SearchKind::optuna, 4, "x"), Catch::Contains("use choice(...) instead of grid"));
    const std::vector<Domain> normal{parse("randn(0.01, 0.001)")};
    CHECK_THROWS_WITH(trial_count(normal, SearchKind::optuna, 4, "x"), Catch::Contains("Optuna has no normal distribution"));
    CHECK(trial_count(continuous, SearchKind::optuna, 8, "x") == 8);
}

TEST_CASE("Optuna's sampler seed: 32 bits, one per (run.seed, trial)") {
    CHECK(optuna_seed(0, 0) == optuna_seed(0, 0));
    CHECK(optuna_seed(0, 0) != optuna_seed(0, 1));
    CHECK(optuna_seed(0, 1) != optuna_seed(1, 1));
    CHECK(optuna_seed(1, 0) != optuna_seed(0, 1));
}

TEST_CASE("a domain is checked against its key's declaration") {
    CHECK_NOTHROW(check_against(parse("choice(none, global)", "data.shuffle"), spec("data.shuffle")));
    CHECK_THROWS_WITH(check_against(parse("choice(none, sideways)", "data.shuffle"), spec("data.shuffle")),
                      Catch::Contains("sideways"));
    CHECK_THROWS_WITH(check_against(parse("uniform(0, 1)", "data.shuffle"), spec("data.shuffle")),
                      Catch::Contains("use choice(...)"));
    CHECK_THROWS_WITH(check_against(parse("uniform(1, 8)", "checkpoint.num_to_keep"), spec("checkpoint.num_to_keep")),
                      Catch::Contains("integer key: use randint"));
    CHECK_NOTHROW(check_against(parse("randint(1, 8)", "checkpoint.num_to_keep"), spec("checkpoint.num_to_keep")));
    CHECK_THROWS(check_against(parse("randint(-3, 8)", "checkpoint.num_to_keep"), spec("checkpoint.num_to_keep")));
}
