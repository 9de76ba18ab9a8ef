#pragma once
// What the supervisor does after a step ended: the one decision, from the step's exit code, the
// run record (did trainrt start, did it leave a record, how many failures) and the nodes lost.
// It writes the records the step could not (a failure the step left none of, a relaunch, the
// final give-up). Tested on run directories without a cluster (tests/supervise/).
#include <string>

#include "config/settings.hpp"
#include "supervise/allocation.hpp"
#include "trainrt/context.hpp"

namespace trainrt::supervise {

enum class Verdict { done, relaunch, requeue, give_up };
const char* verdict_name(Verdict verdict);  // "done", "relaunch", "requeue", "give_up"

struct StepEnd {
    int exit_code = 0;
    double started = 0;   // seconds since the epoch, when the step was launched
    bool ending = false;  // Slurm is ending the job (TERM to the supervisor): never relaunch
};

struct StepDecision {
    Verdict verdict = Verdict::done;
    std::string message;  // one line for the job's output
    int exit_code = 0;    // the supervisor's exit code when it stops
    NodeSet exclude;      // relaunch, requeue: every node to leave out (those given, and silent ones)
    double delay_s = 1;   // relaunch: seconds to wait first (back-off after launch failures)
};

// The nodes of the step launched at `step_started` whose heartbeats went silent (empty when it
// never started): lost whatever Slurm says yet, so they need no probe.
NodeSet silent_nodes_of_step(const std::string& run_dir, double peer_timeout_s, double step_started);

// Seconds before relaunching after `launch_failures` launches in a row failed: 2, 4, 8 ... 60.
double launch_backoff_s(int launch_failures);

// `excluded`: the nodes left out so far and those lost now (Slurm's; lost_nodes()); the decision
// adds the step's silent ones (heartbeats). `allocation_nodes` (0: unknown): when fewer than
// [failure] min_nodes would be left, requeue instead of relaunching. `took_over_from`: the batch
// host, when a watcher decides for its silent supervisor (recorded in the relaunch event).
StepDecision decide_after_step(const std::string& run_dir, const Context& supervisor,
                               const FailureSettings& settings, const StepEnd& step,
                               const NodeSet& excluded, int allocation_nodes = 0,
                               const std::string& took_over_from = "");

}  // namespace trainrt::supervise
