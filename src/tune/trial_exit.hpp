#pragma once
// How a trial step's exit counts for its sweep: done, stopped (PENDING: it runs again after the
// sweep's stop or requeue, from its own checkpoint) or failed (counted against
// tune.max_failures_per_trial unless a node was lost under it, which the sweep checks itself).
#include <vector>

namespace trainrt::tune {

enum class TrialEnd { done, stopped, failed };

struct TrialExit {
    TrialEnd end = TrialEnd::failed;
    int code = 0;         // the code the sweep acts on: the step's, or exit_codes::stopped for a stop it was caught in
    const char* why = ""; // non-empty when the step's own code was not taken as it is: the reason, for the log
};

struct TrialExitContext {
    bool sweep_stopping = false;  // the sweep has seen its own stop
    bool ended_by_sweep = false;  // the sweep ended the step itself (a node under it was lost)
    std::vector<int> stop_signals;  // the trials' stop.signals
};

// Codes trainrt exits with when it stops on request (exit_codes::stopped, requeue_needed, interrupted).
bool is_stop_code(int code);

// The job's stop signal reaches every step of the job, and not always after the sweep has seen
// its own: a step caught before trainrt's handlers are in place (the loader, a Python script's
// imports) dies of the signal (128 + its number), and one failing while the sweep stops failed
// because of the stop. Neither is the trial's failure. A step the sweep ended itself is judged by
// its code alone.
TrialExit classify_trial_exit(int code, const TrialExitContext& context);

}  // namespace trainrt::tune
