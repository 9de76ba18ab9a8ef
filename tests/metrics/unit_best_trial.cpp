#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "metrics/best_trial.hpp"
#include "runlog/run_files.hpp"
#include "temp_run_dir.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;
using metrics::Scope;

namespace {

// A sweep directory whose trials reported `acc` as given (one row per value; none: no rows).
runlog::SweepState sweep_with(const std::string& dir, const std::vector<std::vector<double>>& reports) {
    runlog::SweepState state;
    for (std::size_t i = 0; i < reports.size(); ++i) {
        runlog::TrialRecord trial;
        trial.index = i;
        trial.name = "trial_000" + std::to_string(i);
        std::filesystem::create_directories(dir + "/" + trial.name);
        std::ofstream rows(runlog::path_in(dir + "/" + trial.name, runlog::kResults));
        for (std::size_t r = 0; r < reports[i].size(); ++r)
            rows << "{\"acc\": " << reports[i][r] << ", \"epoch\": " << r + 1 << "}\n";
        state.trials.push_back(trial);
    }
    return state;
}

std::size_t best_index(const std::string& dir, const runlog::SweepState& state, const std::string& mode, Scope scope) {
    const auto best = metrics::best_trial(dir, state, "acc", mode, scope);
    REQUIRE(best);
    return best->index;
}

}  // namespace

TEST_CASE("the best trial under each of Ray's scopes") {
    testing::TempRunDir dir;
    // trial 0 peaks early, trial 1 ends highest, trial 2 has the best mean of its last five.
    const auto state = sweep_with(dir.str(), {{0.9, 0.1, 0.1, 0.1, 0.1, 0.1}, {0.2, 0.2, 0.2, 0.2, 0.2, 0.7},
                                              {0.0, 0.5, 0.5, 0.5, 0.5, 0.5}});
    CHECK(best_index(dir.str(), state, "max", Scope::all) == 0);
    CHECK(best_index(dir.str(), state, "max", Scope::last) == 1);
    CHECK(best_index(dir.str(), state, "max", Scope::last_5_avg) == 2);
    CHECK(best_index(dir.str(), state, "max", Scope::avg) == 2);
    CHECK(best_index(dir.str(), state, "min", Scope::all) == 2);
    CHECK(best_index(dir.str(), state, "min", Scope::last) == 0);
    CHECK(metrics::best_trial(dir.str(), state, "acc", "max", Scope::last)->score == Approx(0.7));
}

TEST_CASE("a tie goes to the first trial; no report is no best") {
    testing::TempRunDir dir;
    const auto state = sweep_with(dir.str(), {{}, {0.5}, {0.5}});
    CHECK(best_index(dir.str(), state, "max", Scope::last) == 1);
    CHECK_FALSE(metrics::best_trial(dir.str(), state, "loss", "max", Scope::last));
    CHECK_FALSE(metrics::best_trial(dir.str(), sweep_with(dir.str(), {{}}), "acc", "min", Scope::all));
}

TEST_CASE("scopes and modes by name; others refused with the accepted ones") {
    CHECK(metrics::scope_named("last-10-avg") == Scope::last_10_avg);
    CHECK(metrics::scope_named("all") == Scope::all);
    CHECK_THROWS_WITH(metrics::scope_named("best"), Catch::Contains("last, avg, last-5-avg, last-10-avg, all"));
    testing::TempRunDir dir;
    CHECK_THROWS_AS(metrics::best_trial(dir.str(), {}, "acc", "maximum", Scope::last), ConfigError);
}
