#pragma once
// tune.search = bayesopt: BayesOpt's Gaussian process (bayesian-optimization 1.x in the project
// environment; Ray Tune's BayesOptSearch) picks a trial's values when the trial first starts, from
// the trials finished before it, as Optuna does (optuna_search.hpp): it runs in trainrt's Python
// package (trainrt/_bayesopt_search.py) through the Python component, loaded only by a sweep that
// chose it; nothing of BayesOpt's is saved: each draw rebuilds the optimizer from the sweep's record
// with random_state from (run.seed, trial index), and the values are committed in sweep.json before
// the trial starts. The first tune.bayesopt.random_search_steps trials are drawn at random (Ray's
// random_search_steps); then the acquisition tune.bayesopt.utility (ucb, ei or poi, with kappa and
// xi) is maximised. BayesOpt searches continuous bounds: a uniform(...) domain as it is; loguniform
// and quniform between their bounds as plain intervals (Ray drops their samplers alike, with a
// warning); any other domain is a ConfigError (check_domains, native_search.cpp).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "trainrt/config.hpp"
#include "tune/optuna_search.hpp"
#include "tune/search_space.hpp"

namespace trainrt::tune {

struct BayesOptRequest {
    const std::vector<Domain>* space = nullptr;
    ScoreOrder mode = ScoreOrder::max;
    std::uint64_t seed = 0;        // run.seed
    std::size_t index = 0;         // the trial being drawn
    std::int64_t random_steps = 10;
    std::string utility = "ucb";
    double kappa = 2.576, xi = 0.0;
    std::vector<FinishedTrial> finished;  // each with its one value of tune.metric
};

// Checks that BayesOpt (1.x) can be imported here, before the sweep writes anything: ConfigError
// of one line (what is missing, what to do) otherwise.
void check_bayesopt();

// The trial's values, one per domain in the space's order.
TrialValues bayesopt_trial(const BayesOptRequest& request);

}  // namespace trainrt::tune
