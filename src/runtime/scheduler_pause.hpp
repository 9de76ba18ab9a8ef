#pragma once
// A sweep trial's pauses ([stop] pause_by, pause_at; set by `trainrt tune` for ASHA): at the first
// report whose pause_by value reaches a point not passed yet, rank 0 waits for the sweep's verdict
// on that point (runlog::decision_path), the highest point reached when one report passes several,
// as the sweep decides at it. So a trial runs on through the rungs it is promoted at, in one
// process, and ends at the one it is stopped at, before training any further (as Ray Tune's
// function trainables wait in report() for the scheduler).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "trainrt/metrics.hpp"

namespace trainrt::runtime {

enum class Verdict : std::int64_t { go_on = 0, stop = 1 };

// The points of `settings` ([stop] pause_at); ConfigError for a list that is not increasing
// integers, or points without pause_by.
std::vector<std::int64_t> pause_points(const StopSettings& settings);

class SchedulerPause {
public:
    SchedulerPause(const StopSettings& settings, std::string run_dir);
    bool active() const { return !by_.empty() && !points_.empty(); }

    // Rank 0, after a report's row was written: the point this row pauses at, if any (those it
    // passes are then behind it); none for a row without pause_metric. `iteration` is the report
    // count.
    std::optional<std::int64_t> reached(const Metrics& row, std::int64_t iteration);

    // Whether reached() would give a point for this row (nothing spent).
    bool would_reach(const Metrics& row, std::int64_t iteration) const;

    // Rank 0: waits for the verdict on `point`. A stop signal meanwhile shortens the wait to
    // kSignalWaitS (then go_on: the signal's own stop comes at the next boundary); a verdict file
    // that says neither word is a TuneError.
    Verdict await(std::int64_t point) const;

private:
    std::optional<double> value_of(const Metrics& row, std::int64_t iteration) const;

    std::string by_;
    std::string metric_;  // pause_metric: rows without it do not pause
    std::vector<std::int64_t> points_;
    std::string run_dir_;
};

}  // namespace trainrt::runtime
