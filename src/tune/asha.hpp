#pragma once
// Asynchronous successive halving (ASHA, Li et al. 2020; Ray Tune's AsyncHyperBandScheduler, one
// bracket), decided at each rung as a trial reaches it: the rungs are grace_period x rf^k below
// max_t, then max_t. A trial that reached rung r continues to the next one when its metric is not
// worse than the rung's cutoff, the (1 - 1/rf) quantile of the values every trial reached r with
// so far (its own included, linear interpolation); otherwise it stops there. In trainrt a trial
// "pauses" at every rung: it runs with train.epochs = the rung, ends with its checkpoint
// committed, and a promoted trial runs again with the next rung and resumes from that checkpoint,
// so no work is repeated. time_attr must be epoch.
#include <cstdint>
#include <vector>

#include "tune/sweep_config.hpp"

namespace trainrt::tune {

std::vector<std::int64_t> asha_rungs(const AshaKeys& asha);

// The rung after `rung`, or 0 when `rung` is the last.
std::int64_t next_rung(const std::vector<std::int64_t>& rungs, std::int64_t rung);

// The cutoff of `values` (one per trial that reached the rung, non-empty) for `reduction_factor`;
// a minimized metric's cutoff is the 1/rf quantile.
double asha_cutoff(std::vector<double> values, double reduction_factor, bool maximize);

bool asha_promotes(double value, double cutoff, bool maximize);

}  // namespace trainrt::tune
