#pragma once
// PB2, population based bandits (Parker-Holder et al. 2020; Ray Tune's PB2): PBT (pbt.hpp) whose
// explore step does not perturb the copied trial's values but picks new ones with a Gaussian-
// process bandit. The model predicts a trial's improvement of its score per unit of time_attr
// over the next interval from (time, score before the interval, values); each decision of every
// trial at a boundary is one observation of that (the score before: its own decision before, or
// its donor's when it had copied one there). Every [space] key of the sweep is explored within its
// domain's bounds (uniform, quniform: linear; loguniform: in the logarithm; randint, qrandint:
// rounded as the domain rounds). The new values maximise the upper confidence bound of the model
// at the donor's last observation's (time, score before), as Ray's PB2 does (a point among the
// data, where a later one would be an extrapolation in both); trials that explored at the same boundary
// count as pending points (their variance shrinks, so that they are not picked twice).
//
// This file's choices, where the paper leaves them open and Ray's differ in detail: the kernel is
// a squared exponential over (score before, values) times (1 - epsilon)^(|t - t'| / 2) (the
// paper's time-varying kernel); its length scale and epsilon are chosen from a fixed grid by the
// marginal likelihood, its variance in closed form; the last 200 observations are used; the
// bound is mean + sqrt(log(1 + n) / 2) x sd over n observations; it is maximised over 1024 points
// drawn from the decision's generator (pbt_draw_seed), so a requeued sweep picks the same values.
#include <cstdint>
#include <string>
#include <vector>

#include "runlog/sweep_record.hpp"
#include "tune/search_space.hpp"

namespace trainrt::tune {

struct Pb2Bound {
    std::string key;
    double low = 0, high = 0;  // the model's coordinates: loguniform's in log(value)
    const Domain* domain = nullptr;
};

struct Pb2Observation {
    std::size_t trial = 0;    // whose interval it was
    double time = 0;          // the boundary the interval ended at
    double score_before = 0;  // the score the interval started from (larger is better)
    std::vector<double> values;  // the trial's values in the interval, in the bounds' order, model coordinates
    double change = 0;        // (score at the end - score_before) / the interval's length
};

// The bounds of every domain of `space`. ConfigError of one line for a domain PB2 cannot explore
// (choice, grid, randn, function).
std::vector<Pb2Bound> pb2_bounds(const std::vector<Domain>& space);

// Every interval of every trial with its decisions at both ends and its values recorded (scores
// negated for mode min, so that larger is better), oldest first.
std::vector<Pb2Observation> pb2_observations(const std::vector<runlog::TrialRecord>& trials,
                                             const std::vector<Pb2Bound>& bounds, bool maximize);

// The values (model coordinates, within the bounds) that maximise the bound at (time,
// score_before), `pending` the values other trials explored at this boundary; empty when fewer
// than two observations are there to fit.
std::vector<double> pb2_select(const std::vector<Pb2Observation>& data, double time, double score_before,
                               const std::vector<std::vector<double>>& pending, const std::vector<Pb2Bound>& bounds,
                               std::uint64_t draw_seed);

// `donor_values` with every bound key set to what pb2_select picked for trial `trial` copying
// trial `donor` at boundary `time`; the donor's values while the donor has no observation yet.
runlog::TrialValues pb2_explore(const std::vector<Pb2Bound>& bounds, const runlog::TrialValues& donor_values,
                                const std::vector<runlog::TrialRecord>& trials, std::size_t trial, std::size_t donor,
                                std::int64_t time, bool maximize, std::uint64_t draw_seed);

}  // namespace trainrt::tune
