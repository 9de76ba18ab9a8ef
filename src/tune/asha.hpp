#pragma once
// Asynchronous successive halving (ASHA, Li et al. 2020; Ray Tune's AsyncHyperBandScheduler, one
// bracket), decided at each rung as a trial reaches it: the rungs are grace_period x rf^k below
// max_t, then max_t. A trial that reached rung r continues to the next one when its metric is not
// worse than the rung's cutoff, the (1 - 1/rf) quantile of the values every trial reached r with
// so far (its own included, linear interpolation); otherwise it stops there. A trial runs in one
// step through the rungs it is promoted at: it waits at each rung's report for the sweep's verdict
// ([stop] pause_by / pause_at, runtime/scheduler_pause.hpp) and ends at the one it is stopped at,
// as a Ray Tune trial does. time_attr is a row's epoch, or training_iteration (the report count).
#include <cstdint>
#include <string>
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

// The rung a row at time `t` decides for a trial whose next undecided rung is `target`: the
// highest rung from `target` up that `t` reached (a row may pass several), 0 when t < target.
std::int64_t rung_at(const std::vector<std::int64_t>& rungs, std::int64_t target, double t);

// "1,3,9": the rungs from `target` up, as [stop] pause_at.
std::string rungs_from(const std::vector<std::int64_t>& rungs, std::int64_t target);

}  // namespace trainrt::tune
