#pragma once
// Goodput: of the rank-time a run's attempts held, the share that trained, and where the rest
// went (`trainrt results`, its `goodput` object). Pure: from the run directory's records alone,
// so it works on a copy of the directory and on a run still going.
#include <nlohmann/json.hpp>

#include "metrics/attempt_times.hpp"
#include "metrics/run_summary.hpp"

namespace trainrt::metrics {

// Rank-seconds: an attempt's seconds times its world size. The parts below sum to
// allocated_rank_s; each attempt's time is cut at its records:
//   launched -> start -> restore -> rows ... -> last row -> failure / stop / finish -> next launch
struct Goodput {
    double allocated_rank_s = 0;  // the attempts' spans (attempt_times.hpp) times their world size
    double useful_rank_s = 0;     // iterations kept in result.jsonl, from the restore (or start) on,
                                  // less the checkpoint stalls inside them
    double start_up_rank_s = 0;   // process launch -> start record (loader, MPI, Python, set-up)
    double restore_rank_s = 0;    // start record -> restore record
    double checkpoint_stall_rank_s = 0;  // stall_s of every committed checkpoint
    double lost_work_rank_s = 0;  // iterations done again after a failure (result.superseded.jsonl)
    double detection_rank_s = 0;  // a failed attempt's last row -> its failure record (or its end)
    double relaunch_rank_s = 0;   // that failure record -> the next launch in the same allocation
    double stop_rank_s = 0;       // a stopped attempt's last row -> its end, less its checkpoint's stall
    double other_rank_s = 0;      // the rest: set-up before the first iteration, work outside report()
    double between_allocations_s = 0;  // wall seconds between attempts of different allocations
                                       // (a requeued job waiting in the queue: not charged)
    int attempts = 0;
};

// {ratio (useful / allocated; null when nothing was allocated), allocated_rank_s, useful_rank_s,
// lost_rank_s: {start_up, restore, checkpoint_stall, lost_work, detection, relaunch, stop, other},
// between_allocations_s}.
nlohmann::ordered_json goodput_json(const Goodput& goodput);

// The run's time, accounted: `goodput`, and `recoveries`, one entry per failed attempt that
// another followed, oldest first: how long the way back to training took, by phase. {attempt (the next one's number, 1-based), detection_s (the failed
// attempt's last row -> its failure record, or its end), relaunch_s (-> the next process launch;
// a requeue's wait in the queue included), start_up_s (-> its start record), restore_s (-> its
// restore record), first_iteration_s (-> its first row), training_again_s (the failed attempt's
// last row -> the next one's first row: null until it reported)}.
// `attempts` are timed_attempts() of the same records, computed once by the caller.
struct TimeAccount {
    Goodput goodput;
    nlohmann::ordered_json recoveries = nlohmann::ordered_json::array();
};
TimeAccount account_time(const RunRecords& records, const std::vector<TimedAttempt>& attempts);

}  // namespace trainrt::metrics
