#pragma once
// Population based training (Jaderberg et al. 2017; Ray Tune's PopulationBasedTraining), decided
// as each trial reaches a boundary: every perturbation_interval epochs up to the base job's
// train.epochs, where the trial pauses as at an ASHA rung (a finished run with its checkpoint
// committed). Its metric there joins the population's latest scores. A trial in the bottom
// quantile_fraction exploits one trial of the top quantile_fraction (drawn): it goes on from that
// trial's newest checkpoint with that trial's values, explored: each value drawn anew from its
// domain with resample_probability, else perturbed (a number x0.8 or x1.2, kept within its
// domain's bounds and rounded as the domain rounds; a choice moves to a neighbouring value). All
// draws come from (run.seed, trial, boundary), so a requeued sweep decides the same.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tune/native_search.hpp"

namespace trainrt::tune {

// interval, 2 x interval, ... below `total`, then `total` (total >= 1).
std::vector<std::int64_t> pbt_boundaries(std::int64_t interval, std::int64_t total);

// The boundary after `epoch` (0 when none is).
std::int64_t pbt_next_boundary(const std::vector<std::int64_t>& boundaries, std::int64_t epoch);

struct PbtScore {
    std::size_t trial = 0;
    double value = 0;
};

struct PbtQuantiles {
    std::vector<std::size_t> lower;  // the worst trials, worst first
    std::vector<std::size_t> upper;  // the best trials, best first
};

// Ray's split: ceil(n x fraction) trials in each quantile, at most n / 2; none below 2 scores.
PbtQuantiles pbt_quantiles(std::vector<PbtScore> scores, double fraction, bool maximize);

// A generator for the decision of `trial` at `boundary`.
std::uint64_t pbt_draw_seed(std::uint64_t seed, std::size_t trial, std::int64_t boundary);

// The donor among `upper` (non-empty).
std::size_t pbt_pick_donor(const std::vector<std::size_t>& upper, std::uint64_t draw_seed);

// The donor's values, explored (see above).
TrialValues pbt_explore(const std::vector<Domain>& space, const TrialValues& donor_values,
                        double resample_probability, std::uint64_t draw_seed);

}  // namespace trainrt::tune
