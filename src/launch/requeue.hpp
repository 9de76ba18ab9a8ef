#pragma once
// Asking Slurm to put a running job back in the queue: the one policy for rank 0 after a stop
// (time limit, preemption, signal) and for the supervisor (a step that could not requeue itself,
// fewer nodes left than [failure] min_nodes).
#include <string>

#include "launch/slurm_client.hpp"

namespace trainrt::launch {

struct RequeueOutcome {
    int exit_code = 0;    // stopped (9), or requeue_needed (75) when the caller's caller must do it
    std::string by;       // "trainrt", "slurm" (Slurm is requeueing it already) or "" (not requeued)
    std::string message;  // one line for the job's output
};

// A job Slurm is already requeueing (its restart count is above `restart_count`) or ending
// (cancelled) is left alone; no scontrol where this runs, or a controller that does not answer,
// is exit 75 so that a supervisor outside the container (or RequeueExit=75) requeues it.
RequeueOutcome request_requeue(SlurmClient& slurm, const std::string& job_id, int restart_count);

}  // namespace trainrt::launch
