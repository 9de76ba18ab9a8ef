#pragma once
// The searchers whose library is Python's and that draw a trial's values when the trial first
// starts, from the trials finished before it, as Optuna does (optuna_search.hpp):
//   tune.search = bayesopt: BayesOpt 1.x's Gaussian process (trainrt/_bayesopt_search.py; Ray
//     Tune's BayesOptSearch): the first tune.bayesopt.random_search_steps trials at random, then
//     the acquisition tune.bayesopt.utility (ucb, ei or poi, with kappa and xi) maximised; over
//     continuous bounds only (uniform; loguniform and quniform as plain intervals, as Ray's);
//   tune.search = nevergrad: the Nevergrad optimizer tune.nevergrad.optimizer names
//     (trainrt/_nevergrad_search.py; Ray Tune's NevergradSearch), told every finished trial, asked
//     once; choice, uniform, loguniform, randint and qrandint domains;
//   tune.search = hyperopt: HyperOpt's TPE (trainrt/_hyperopt_search.py; Ray Tune's HyperOptSearch),
//     its first tune.hyperopt.n_initial_points trials at random; over the [space] domains as Ray
//     converts them, or over the HyperOpt space pickled in tune.hyperopt.space (conditional:
//     hp.choice between dicts), whose top-level keys are searched() domains, each trial's value of
//     one the JSON of its HyperOpt labels (trainrt.tune evaluates the space on them);
//   tune.search = bohb: BOHB's kernel density model (trainrt/_bohb_search.py, hpbandster's config
//     generator; Ray Tune's TuneBOHB) beside scheduler = hyperband (Ray's HyperBandForBOHB), told
//     every trial's metric at every milestone it reached (its budget), as Ray's is told at each
//     pause; choice, uniform, loguniform and randint domains.
// Each runs in trainrt's Python package through the Python component, loaded only by a sweep that
// chose it. Nothing of the library's is saved: each draw rebuilds its optimizer from the sweep's
// record, seeded from (run.seed, trial index), and the values are committed in sweep.json before
// the trial starts. Which domains a searcher takes is checked before anything runs
// (check_domains, native_search.cpp).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainrt/config.hpp"
#include "tune/optuna_search.hpp"
#include "tune/search_space.hpp"

namespace trainrt::tune {

struct PythonSearchRequest {
    std::string module;                 // "_bayesopt_search": trainrt/_bayesopt_search.py
    const std::vector<Domain>* space = nullptr;
    ScoreOrder mode = ScoreOrder::max;
    std::uint64_t seed = 0;             // run.seed
    std::size_t index = 0;              // the trial being drawn
    nlohmann::json settings;            // the searcher's own [tune] keys, by name
    std::vector<FinishedTrial> finished;  // each with its one value of tune.metric (bohb: at a budget)
};

// Checks that the searcher's library can be imported here and takes `settings`, before the sweep
// writes anything: ConfigError of one line (what is missing, what to do) otherwise.
void check_python_search(const std::string& module, const nlohmann::json& settings);

// The trial's values, one per domain in the space's order.
TrialValues python_search_trial(const PythonSearchRequest& request);

// What every Python searcher (these and Optuna's) reads and gives back: a domain and a trial's
// values as JSON, and the values a searcher drew ({key: config text}), one per domain in the
// space's order (WorkloadError naming trainrt/MODULE.py for one it did not draw).
nlohmann::json domain_json(const Domain& domain);
nlohmann::json values_json(const TrialValues& values);
TrialValues drawn_values(const std::vector<Domain>& space, const nlohmann::json& drawn, const std::string& module);

}  // namespace trainrt::tune
