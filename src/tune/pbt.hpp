#pragma once
// Population based training (Jaderberg et al. 2017; Ray Tune's PopulationBasedTraining), decided
// as each trial reaches a boundary: every perturbation_interval units of time_attr up to the
// trial's end, where the trial's step ends (a finished run with its checkpoint committed).
// time_attr epoch: a row's epoch, the end the base job's train.epochs; training_iteration: the
// report count, as in Ray, the end the base job's [stop] criteria training_iteration>=N. Its metric
// there is scored against the population's at the same time (each other trial's latest score at
// or before it). A trial in the bottom quantile_fraction exploits one trial of the top
// quantile_fraction (drawn): it goes on from that trial's newest checkpoint at or before the
// boundary with that trial's values, explored: each value drawn anew from its domain with
// resample_probability, else perturbed (a number x0.8 or x1.2, kept within its domain's bounds and
// rounded as the domain rounds; a choice moves to a neighbouring value, or is drawn anew when the
// value is not one of the choice's; a function's number x0.8 or x1.2 unbounded, an integer
// truncated, as Ray's). All draws come from (run.seed, trial, boundary), so a
// requeued sweep decides the same.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "runlog/sweep_record.hpp"
#include "runtime/stop_criteria.hpp"
#include "tune/native_search.hpp"

namespace trainrt::tune {

// interval, 2 x interval, ... below `total`, then `total` (total >= 1).
std::vector<std::int64_t> pbt_boundaries(std::int64_t interval, std::int64_t total);

// The boundary after `time` (0 when none is).
std::int64_t pbt_next_boundary(const std::vector<std::int64_t>& boundaries, std::int64_t time);

// time_attr training_iteration: a trial's end, the smallest training_iteration>=N of `criteria`
// (the base job's [stop] criteria; Ray's RunConfig(stop={"training_iteration": N})) rounded up, at
// least 1; nullopt when no criterion bounds the reports.
std::optional<std::int64_t> pbt_iteration_end(const std::vector<runtime::StopCriterion>& criteria);

struct PbtScore {
    std::size_t trial = 0;
    double value = 0;
};

struct PbtQuantiles {
    std::vector<std::size_t> lower;  // the worst trials, worst first
    std::vector<std::size_t> upper;  // the best trials, best first
};

// The population's scores for `trial`'s decision at `time` with `value`: its own first, then each
// other trial's latest decision at or before `time` (trials scored only later are left out: the
// population is compared at the same time, whichever order the trials ran in).
std::vector<PbtScore> pbt_scores_at(const std::vector<runlog::TrialRecord>& trials, std::size_t trial,
                                    double value, std::int64_t time);

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
