#pragma once
// Surviving the loss of the batch host (README "Losing the batch host"). slurm/trainrt-srun keeps
// a beat in the run directory while it runs on the batch host (`trainrt watch beat`); a small
// watcher step on another node (`trainrt watch batch-host`) waits for that beat to go silent for
// [failure] peer_timeout and then takes the job over: it relaunches on the nodes left and ends the
// job itself, which Slurm would otherwise keep RUNNING with nothing in it (--no-kill) or notice
// only after SlurmdTimeout.
#include <sys/types.h>

#include <string>

namespace trainrt::runtime {

// Rewrites the wrapper's beat (host, step_started, now) every heartbeat interval while `parent`
// is this process's parent; returns when it no longer is (the wrapper is gone). SIGTERM ends it. A
// beat that cannot be written is said once and tried again at the next interval.
void keep_wrapper_beat(const std::string& run_dir, double peer_timeout_s, const std::string& host,
                       double step_started, pid_t parent);

struct Takeover {
    double step_started = 0;  // launch time of the step the silent wrapper was waiting for
    double silent_s = 0;      // how long its beat had been silent when the watcher took over
};

// Blocks until the wrapper on `batch_host` has been silent for longer than `peer_timeout_s`
// (counted from this call when it has not beaten since), records the takeover (own_host) so that
// a wrapper that was only hung launches nothing more, then waits until the last attempt's other
// nodes stopped beating (their ranks ended) and returns. The batch host counts as alive while
// its own ranks beat, whatever happened to its wrapper.
Takeover await_takeover(const std::string& run_dir, double peer_timeout_s, const std::string& batch_host,
                        const std::string& own_host);

}  // namespace trainrt::runtime
