#pragma once
// The native searchers, grid and random (Ray Tune's BasicVariantGenerator): trial i's values are
// a function of (run.seed, i) alone, so a sweep restarted after a requeue or kill -9 asks again
// and gets the same trials, with no searcher state to save.
//   grid:   every domain enumerated (grid(...) and choice(...) values; a continuous domain is an
//           error); the trials are the cartesian product, the last key varying fastest.
//   random: grid(...) domains enumerated (trial i takes grid point i mod points), every other
//           domain drawn for each trial from a generator seeded with (run.seed, i).
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runlog/sweep_record.hpp"
#include "tune/search_space.hpp"

namespace trainrt::tune {

enum class SearchKind { grid, random, optuna, bayesopt, nevergrad, hyperopt, bohb };

// A searcher that draws a trial's values when the trial first starts, from the results before it
// (Optuna, BayesOpt, Nevergrad, HyperOpt, BOHB), not from (run.seed, index) alone when it enters the sweep.
inline bool drawn_at_start(SearchKind kind) {
    return kind == SearchKind::optuna || kind == SearchKind::bayesopt || kind == SearchKind::nevergrad ||
           kind == SearchKind::hyperopt || kind == SearchKind::bohb;
}

using runlog::TrialValues;  // a trial's sampled settings, in the space's order

// The points the enumerated domains make (1 when none is); grid search enumerates choices too.
std::size_t grid_points(const std::vector<Domain>& space, SearchKind kind);

// The number of trials the sweep runs: `num_samples` (0: one per grid point), checked against the
// grid (grid search: equal to its points; random: a multiple of them) and the domains the search
// can handle; ConfigError of one line naming `num_samples_source` otherwise.
std::size_t trial_count(const std::vector<Domain>& space, SearchKind kind, std::int64_t num_samples,
                        const std::string& num_samples_source);

TrialValues native_trial(const std::vector<Domain>& space, SearchKind kind, std::uint64_t seed, std::size_t index);

}  // namespace trainrt::tune
