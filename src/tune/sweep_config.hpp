#pragma once
// `trainrt tune --config sweep.ini [--section.key=VALUE ...]`: the sweep file's [tune] settings
// (declared once below, as every setting is), its [space] domains, and the base job every trial
// runs (tune.base, an ordinary job file, with the command line's --section.key=VALUE on top, as
// for a run). Everything is checked before anything runs: a bad setting or domain is one line
// (the key, FILE:LINE, what is accepted, a close match) and exit 2.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "trainrt/config.hpp"
#include "trainrt/keys.hpp"
#include "tune/python_search.hpp"
#include "tune/native_search.hpp"
#include "tune/optuna_search.hpp"
#include "tune/search_space.hpp"

namespace trainrt {

enum class SchedulerKind { fifo, asha, pbt, pb2, hyperband, median_stopping };
template <> struct EnumNames<tune::SearchKind> {
    static const std::vector<std::pair<std::string, tune::SearchKind>>& get();
};
template <> struct EnumNames<SchedulerKind> { static const std::vector<std::pair<std::string, SchedulerKind>>& get(); };

namespace tune {

#define TRAINRT_TUNE_KEYS(KEY)                                                                                       \
    KEY(base, std::string, "", a_path(), "the job every trial runs (an INI file; relative to the sweep file)")        \
    KEY(metric, std::string, "", any_value(), "the reported metric trials are compared by (every scheduler but fifo, and every searcher but grid and random, need it)") \
    KEY(mode, ScoreOrder, "max", any_value(), "max: a larger metric is better; min: a smaller one")                   \
    KEY(num_samples, std::int64_t, "1", at_least(0), "trials (0: one per grid point)")                                \
    KEY(ranks_per_trial, std::int64_t, "1", at_least(1), "ranks each trial runs on")                                  \
    KEY(max_concurrent_trials, std::int64_t, "0", at_least(0), "trials at once (0: as many as the allocation holds)") \
    KEY(search, SearchKind, "random", any_value(), "grid, random, optuna (Optuna's TPE sampler), bayesopt (BayesOpt's Gaussian process), nevergrad, hyperopt (HyperOpt's TPE) or bohb (BOHB's model, with scheduler = hyperband)")                   \
    KEY(scheduler, SchedulerKind, "fifo", any_value(), "fifo, asha (successive halving), pbt, pb2 (PBT exploring by a GP bandit), hyperband or median_stopping") \
    KEY(max_failures_per_trial, std::int64_t, "0", at_least(0), "retries of a failed trial before it is ERROR")      \
    KEY(repeat, std::int64_t, "1", at_least(1),                                                                      \
        "optuna, bayesopt, nevergrad, hyperopt, bohb: trials per drawn configuration, the searcher told their mean (Ray's Repeater)") \
    KEY(repeat_set_index, bool, "false", any_value(),                                                                \
        "with repeat > 1, true: each trial gets train.__trial_index__, its place in its group (Ray's Repeater(set_index=True), which Python functions take)")
TRAINRT_KEYS(TuneKeys, "tune", TRAINRT_TUNE_KEYS);

#define TRAINRT_ASHA_KEYS(KEY)                                                                                  \
    KEY(time_attr, std::string, "epoch", one_of({"epoch", "training_iteration"}),                                  \
        "what rungs count: epoch (a row's epoch; trials run with train.epochs = max_t) or training_iteration (reports)") \
    KEY(max_t, std::int64_t, "100", at_least(1), "the time_attr a trial trains to at most")                     \
    KEY(grace_period, std::int64_t, "1", at_least(1), "the first rung: time_attr before any trial is stopped")   \
    KEY(reduction_factor, double, "3", between(1.000001, 1e9), "1 / the fraction of trials promoted at a rung")
TRAINRT_KEYS(AshaKeys, "tune.asha", TRAINRT_ASHA_KEYS);

#define TRAINRT_PBT_KEYS(KEY)                                                                                        \
    KEY(time_attr, std::string, "epoch", one_of({"epoch", "training_iteration"}),                                   \
        "(pbt and pb2) what boundaries count: epoch (a row's epoch, to the base job's train.epochs) or training_iteration "        \
        "(reports, to the base job's [stop] criteria training_iteration>=N); a trial's step ends at each")           \
    KEY(perturbation_interval, std::int64_t, "4", at_least(1), "time_attr between exploit/explore decisions")        \
    KEY(quantile_fraction, double, "0.25", between(0, 0.5), "the bottom fraction that copies the top fraction")      \
    KEY(resample_probability, double, "0.25", between(0, 1), "pbt: chance a mutated value is drawn anew from its domain")   \
    KEY(start_from_base, std::string, "", any_value(),                                                               \
        "[space] keys (comma list) every trial starts with at the base job's value, PBT exploring their domain "      \
        "from the first exploit (Ray's param_space constants that hyperparam_mutations names)")
TRAINRT_KEYS(PbtKeys, "tune.pbt", TRAINRT_PBT_KEYS);

#define TRAINRT_HYPERBAND_KEYS(KEY)                                                                              \
    KEY(time_attr, std::string, "epoch", one_of({"epoch", "training_iteration"}),                                   \
        "what milestones count: epoch (a row's epoch; a trial's step runs with train.epochs = the milestone) or "   \
        "training_iteration (reports)")                                                                            \
    KEY(max_t, std::int64_t, "81", at_least(1), "the time_attr a trial trains to at most; it sets the brackets")    \
    KEY(reduction_factor, double, "3", between(1.000001, 1e9), "eta: 1 / the fraction of a bracket kept at a milestone") \
    KEY(stop_last_trials, bool, "true", any_value(),                                                                  \
        "true: a bracket's trials stop at its last milestone; false: they run on to their own end")
TRAINRT_KEYS(HyperBandKeys, "tune.hyperband", TRAINRT_HYPERBAND_KEYS);

#define TRAINRT_MEDIAN_KEYS(KEY)                                                                                   \
    KEY(time_attr, std::string, "training_iteration", one_of({"epoch", "training_iteration"}),                      \
        "what the rule counts: training_iteration (reports, up to the base job's [stop] training_iteration>=N) or " \
        "epoch (a row's epoch, up to train.epochs)")                                                                 \
    KEY(grace_period, double, "1", between(0, 1e12), "time_attr before any trial is stopped")                        \
    KEY(min_samples_required, std::int64_t, "3", at_least(1), "other trials' running means needed to stop one")
TRAINRT_KEYS(MedianKeys, "tune.median", TRAINRT_MEDIAN_KEYS);

#define TRAINRT_OPTUNA_KEYS(KEY)                                                                                   \
    KEY(n_startup_trials, std::int64_t, "10", at_least(0), "trials drawn at random before TPE models the results (Optuna's default)") \
    KEY(space, std::string, "", any_value(),                                                                         \
        "a define-by-run function FILE.py:NAME or module:NAME that draws each trial's [train] values on an Optuna "  \
        "trial (Ray's OptunaSearch(space=function)), instead of [space] domains")                                  \
    KEY(objectives, std::string, "", any_value(),                                                                    \
        "what Optuna optimises, a comma list of METRIC:min|max (several: a multi-objective study, Ray's "          \
        "OptunaSearch(metric=[...], mode=[...])); empty: tune.metric and tune.mode")
TRAINRT_KEYS(OptunaKeys, "tune.optuna", TRAINRT_OPTUNA_KEYS);

#define TRAINRT_BAYESOPT_KEYS(KEY)                                                                                 \
    KEY(random_search_steps, std::int64_t, "10", at_least(0), "trials drawn at random before the Gaussian process models the results (Ray's default)") \
    KEY(utility, std::string, "ucb", one_of({"ucb", "ei", "poi"}),                                                   \
        "the acquisition maximised: ucb (upper confidence bound), ei (expected improvement) or poi (probability of improvement)") \
    KEY(kappa, double, "2.576", between(0, 1e9), "ucb's weight of the standard deviation (Ray's default)")             \
    KEY(xi, double, "0", between(0, 1e9), "ei and poi: the improvement sought over the best result")
TRAINRT_KEYS(BayesOptKeys, "tune.bayesopt", TRAINRT_BAYESOPT_KEYS);

#define TRAINRT_NEVERGRAD_KEYS(KEY)                                                                                \
    KEY(optimizer, std::string, "OnePlusOne", any_value(),                                                          \
        "the Nevergrad optimizer, by its name in nevergrad.optimizers.registry (Ray's NevergradSearch(optimizer=...))")
TRAINRT_KEYS(NevergradKeys, "tune.nevergrad", TRAINRT_NEVERGRAD_KEYS);

#define TRAINRT_HYPEROPT_KEYS(KEY)                                                                                 \
    KEY(n_initial_points, std::int64_t, "20", at_least(0), "trials drawn at random before TPE models the results (Ray's default)") \
    KEY(gamma, double, "0.25", between(0.01, 0.99), "the share of finished trials TPE takes as the good ones (Ray's default)") \
    KEY(space, std::string, "", any_value(),                                                                         \
        "a HyperOpt space (hp.choice, hp.uniform, ... nested in dicts), pickled in this file (relative to the sweep " \
        "file; Ray's HyperOptSearch(space=...) writes it): every [space] key is then searched(), a top-level key "  \
        "of that space")
TRAINRT_KEYS(HyperOptKeys, "tune.hyperopt", TRAINRT_HYPEROPT_KEYS);

// BOHB's own settings, as hpbandster's BOHB config generator names them (Ray's TuneBOHB(bohb_config=...)).
#define TRAINRT_BOHB_KEYS(KEY)                                                                                     \
    KEY(min_points_in_model, std::int64_t, "0", at_least(0), "results at a budget before BOHB models it (0: BOHB's default, the domains + 1)") \
    KEY(top_n_percent, std::int64_t, "15", between(1, 99), "the best percent of a budget's results the good density is fitted on") \
    KEY(num_samples, std::int64_t, "64", at_least(1), "candidates drawn from the good density per suggestion")          \
    KEY(random_fraction, double, "0.3333333333333333", between(0, 1), "the share of suggestions drawn at random")    \
    KEY(bandwidth_factor, double, "3", between(1e-9, 1e9), "widens the candidates' kernel bandwidths")                 \
    KEY(min_bandwidth, double, "0.001", between(0, 1e9), "the smallest kernel bandwidth (keeps diversity)")
TRAINRT_KEYS(BohbKeys, "tune.bohb", TRAINRT_BOHB_KEYS);

struct SweepConfig {
    std::string path;  // the sweep file
    TuneKeys tune;
    AshaKeys asha;
    PbtKeys pbt;
    HyperBandKeys hyperband;
    MedianKeys median;
    OptunaKeys optuna;
    BayesOptKeys bayesopt;
    NevergradKeys nevergrad;
    HyperOptKeys hyperopt;
    BohbKeys bohb;
    std::vector<Objective> objectives;  // what Optuna optimises (search = optuna; none otherwise)
    std::vector<Domain> space;  // in the file's order
    JobConfig base;             // the base job, command-line overrides included
    std::size_t trials = 0;     // how many the sweep runs (trial_count)
    std::string base_path;      // tune.base resolved against the sweep file's directory
    std::vector<std::string> overrides;  // the command line's --section.key=VALUE for every trial
    bool resume_changed = false;         // --resume-changed: go on in a directory whose sweep had another definition
    bool resume_errored = false;         // --resume-errored: ERROR trials go on from their checkpoints
};

// Every [tune] key (the three sections'), for --help and the documentation's table.
std::vector<OptionSpec> tune_options();

// Loads and checks `trainrt tune`'s arguments (argv[0] is the program). ConfigError on anything wrong.
SweepConfig load_sweep(int argc, const char* const argv[]);

}  // namespace tune
}  // namespace trainrt
