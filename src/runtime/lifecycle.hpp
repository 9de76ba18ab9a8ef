#pragma once
// The run's life across processes: the failure budget checked at every start, the stop record
// and self-requeue after a stop, and the relaunch decision the slurm/ wrapper asks for after a
// step ends. Rank 0 (or the wrapper) only; they write events.jsonl.
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/lifecycle.hpp"
#include "runlog/history.hpp"
#include "runtime/stop_coordinator.hpp"
#include "trainrt/context.hpp"

namespace trainrt::runtime {


// Before the start event: records an attempt that ended without a record as a failure, then
// throws FailureLimitError (after a final record) when the failures exceed max_failures.
runlog::History begin_attempt(const std::string& run_dir, const Context& context,
                             const config::LifecycleSettings& settings);

struct StopSummary {
    StopRequest request;
    std::int64_t iteration = 0;          // _training_iteration of the last report
    std::string checkpoint;              // the checkpoint committed after the request ("" if none)
    std::vector<std::int64_t> boundaries_by_rank;
};

// After the stop checkpoint committed: the stop event, then the requeue (when the reason calls
// for one and [failure] requeue = auto). Returns the exit code for every rank.
int end_stopped(const Context& context, const config::LifecycleSettings& settings,
                const StopSummary& stop);

// What the relaunch wrapper does after a step ended with `exit_code`. `excluded_nodes`: those
// Slurm reports down; the relaunch also leaves out the nodes of the step whose heartbeat went
// silent (peer_timeout) before the step ended, which Slurm may still call alive.
// `allocation_nodes` (0: unknown): the job's nodes; when fewer than [failure] min_nodes would be
// left, the verdict is requeue instead of relaunch. `took_over_from`: the batch host, when a
// watcher on another node decides for its silent wrapper (recorded in the relaunch event).
enum class StepVerdict { done, relaunch, requeue, give_up };
struct StepDecision {
    StepVerdict verdict = StepVerdict::done;
    std::string message;   // one line for the job's output
    int exit_code = 0;     // the wrapper's exit code when it stops
    std::vector<std::string> exclude;  // relaunch: the nodes to leave out (Slurm's and silent ones)
    double delay_s = 1;                // relaunch: seconds to wait first (back-off after launch failures)
};

// Seconds before relaunching after `launch_failures` launches in a row failed: 2, 4, 8 ... 60.
double launch_backoff_s(int launch_failures);

StepDecision after_step(const std::string& run_dir, const Context& context,
                        const config::LifecycleSettings& settings, int exit_code,
                        std::time_t step_started, const std::vector<std::string>& excluded_nodes,
                        bool ending, int allocation_nodes = 0, const std::string& took_over_from = "");

}  // namespace trainrt::runtime
