#pragma once
// The median stopping rule (Golovin et al. 2017; Ray Tune's MedianStoppingRule), decided at every
// report of a trial from grace_period on (time_attr: training_iteration, the reports, or epoch):
// the trial stops when its best metric so far is strictly worse than the median of the running
// means of the other trials that have reached that time (each one's mean over its reports from
// grace_period up to the time), once at least min_samples_required of them have; otherwise it goes
// on. A trial waits at each of those reports for the sweep's verdict ([stop] pause_by / pause_at,
// as ASHA's rungs: rung_scheduler.cpp), so the decision is the one Ray's controller takes before
// the trial's next step. Not done here, and refused where a user would ask for it: Ray's
// hard_stop=False (pause instead of stop) and its yielding of a trial's slot to pending trials
// while samples are too few (min_time_slice): a trial here goes on.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tune/sweep_config.hpp"

namespace trainrt::tune {

struct TimedValue {
    double time = 0;   // the row's time_attr
    double value = 0;  // its metric
};

struct MedianVerdict {
    bool stop = false;
    double median = 0;        // of the others' running means (0 with too few)
    std::size_t samples = 0;  // how many running means
};

// The rule for a trial whose rows so far are `own` at `time`, beside `others`' rows (each a
// trial's, in time order).
MedianVerdict median_verdict(const std::vector<TimedValue>& own, const std::vector<std::vector<TimedValue>>& others,
                             double time, double grace_period, std::size_t min_samples_required, bool maximize);

// The reports a trial is decided at: every time_attr unit from grace_period (at least 1) to its
// end: by epoch the base job's train.epochs, by training_iteration its [stop] criteria's
// training_iteration>=N. ConfigError, naming the base job, when it sets no end.
std::vector<std::int64_t> median_points(const SweepConfig& sweep);

}  // namespace trainrt::tune
