#pragma once
// Synchronous HyperBand (Li et al. 2018) as Ray Tune's HyperBandScheduler runs it. Trials fill
// brackets in their order: a band holds brackets s = 0, 1, ..., s_max - 1 (s_max = round(log_eta
// max_t) + 1; a bracket whose first milestone would be 0 is skipped), bracket s holding
// n0(s) = ceil(s_max / (s + 1) x eta^s) trials, then the next band begins. Bracket s's milestones
// are r0 = int(max_t x eta^-s), then int(min(r x eta, max_t)) each, s + 1 of them. Every trial of
// a bracket trains to the bracket's milestone and waits there (its step ends); when every trial
// still in the bracket has reached it, the best ceil(n / eta) go on to the next milestone (n: the
// bracket's size at that stage, its designed size, not the trials it holds) and the others stop.
// At the last milestone every trial stops (stop_last_trials), or runs on to its own end.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace trainrt::tune {

struct HyperBandShape {
    std::int64_t max_t = 81;
    double eta = 3;  // reduction_factor
};

struct BracketPlace {
    std::size_t bracket = 0;  // counted over every band: trials of one bracket share it
    int s = 0;                // the bracket's halvings (its place in the band)
};

// Brackets per band (Ray's s_max_1).
int hyperband_brackets_per_band(const HyperBandShape& shape);

// The bracket trial `index` (0-based, in the order trials enter the sweep) is in.
BracketPlace hyperband_bracket(const HyperBandShape& shape, std::size_t index);

// Bracket s's milestones, s + 1 of them, rising.
std::vector<std::int64_t> hyperband_milestones(const HyperBandShape& shape, int s);

// Bracket s's size at each milestone: n0(s), then ceil(n / eta) per halving (s + 1 of them).
std::vector<std::size_t> hyperband_sizes(const HyperBandShape& shape, int s);

// The trials (of `scores`, each a trial's index and its metric at the milestone, in trial order)
// that go on: the `keep` best, as Ray picks them (ascending by the metric signed by the mode, ties
// in trial order, the last `keep`).
struct TrialScore {
    std::size_t trial = 0;
    double value = 0;
};
std::vector<std::size_t> hyperband_keep(std::vector<TrialScore> scores, std::size_t keep, bool maximize);

}  // namespace trainrt::tune
