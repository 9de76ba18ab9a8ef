#pragma once
// tune.search = optuna: Optuna's TPE sampler (the project environment's optuna) draws a trial's values
// when the trial first starts, from the trials finished before it. Optuna runs in trainrt's
// Python package (trainrt/_optuna_search.py) through the Python component, loaded only by a
// sweep that chose it. Nothing of Optuna's is saved: each draw rebuilds the study from the sweep's
// record (the finished trials' values and metric) with a sampler seeded by (run.seed, trial
// index), and the drawn values are committed in sweep.json before the trial starts, so a requeued
// or killed sweep finds every drawn trial as it was.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tune/native_search.hpp"
#include "tune/search_space.hpp"
#include "config/settings.hpp"

namespace trainrt::tune {

// What Optuna optimises: a reported metric and its direction; several make a multi-objective
// study (Ray's OptunaSearch(metric=[...], mode=[...])).
struct Objective {
    std::string metric;
    ScoreOrder mode = ScoreOrder::max;
};

// tune.optuna.objectives' text ("loss:min, gain:max"): ConfigError naming `key` and `source` on an
// entry that is not METRIC:min or METRIC:max, or on a metric named twice.
std::vector<Objective> parse_objectives(const std::string& text, const std::string& key, const std::string& source);

// A finished trial as evidence for the sampler: its values and its final value of each objective.
struct FinishedTrial {
    TrialValues values;
    std::vector<double> metrics;
    std::int64_t budget = 0;  // search = bohb: the HyperBand milestone the metric was reached at (0: a trial's end)
};

struct OptunaRequest {
    const std::vector<Domain>* space = nullptr;
    std::string space_function;     // tune.optuna.space: a define-by-run function instead of `space`
    std::vector<Objective> objectives;
    std::uint64_t seed = 0;         // run.seed
    std::size_t index = 0;          // the trial being drawn
    std::int64_t n_startup_trials = 10;
    std::vector<FinishedTrial> finished;
};

// Checks that Optuna can be imported here, and that a define-by-run function (tune.optuna.space;
// empty: none) loads and draws on a trial of a study of its own, before the sweep writes
// anything: ConfigError of one line (what is missing or wrong, what to do) otherwise.
void check_optuna(const std::string& space_function);

// The trial's values: one per domain in the space's order; with a define-by-run function, the
// [train] values it suggested and the constants it returned, in key order.
TrialValues optuna_trial(const OptunaRequest& request);

// The sampler's seed for trial `index`: 32 bits (numpy's RandomState takes no more), different
// for every trial of a sweep and the same for the same (run.seed, index).
std::uint32_t optuna_seed(std::uint64_t seed, std::size_t index);

}  // namespace trainrt::tune
