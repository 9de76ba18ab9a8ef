#pragma once
// Surviving the loss of the batch host (docs/guides/slurm.md, "Losing the batch host"). The supervisor on the
// batch host keeps a beat in the run directory (WrapperBeat); a watcher supervisor on another
// node (a one-task step) waits for that beat to go silent for [failure] peer_timeout and then
// takes the job over: it relaunches on the nodes left and ends the job itself, which Slurm would
// otherwise keep RUNNING with nothing in it (--no-kill) or notice only after SlurmdTimeout.
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "supervise/clock.hpp"
#include "supervise/node_health.hpp"

namespace trainrt::supervise {

// Rewrites heartbeats/.wrapper (host, the step's launch time, now) every heartbeat interval from
// a thread of the supervisor, so that a supervisor that is stopped (SIGSTOP, a hung node) stops
// beating too. A beat that cannot be written is said once and tried again at the next interval:
// a storage hiccup must not make the watcher take over a live job. Stops on destruction.
class WrapperBeat {
public:
    WrapperBeat(std::string run_dir, double peer_timeout_s, std::string host, Say say);
    ~WrapperBeat();
    WrapperBeat(const WrapperBeat&) = delete;
    WrapperBeat& operator=(const WrapperBeat&) = delete;

    // Beats now for the step launched at `step_started`, and from now on.
    void step_launched(double step_started);

private:
    void loop();
    void write_beat();

    std::string run_dir_, host_;
    double interval_s_;
    Say say_;
    std::mutex mutex_;
    std::condition_variable wake_;
    double step_started_ = 0;
    bool stopping_ = false;
    std::atomic<bool> said_{false};
    std::thread thread_;
};

struct Takeover {
    double step_started = 0;  // launch time of the step the silent supervisor was waiting for
    double silent_s = 0;      // how long the batch host had been silent
};

// Blocks until the supervisor on `batch_host` has been silent for longer than `peer_timeout_s`
// (counted from this call when it has not beaten since), records the takeover (`own_host`) so
// that a supervisor that was only hung launches nothing more, then waits until the last
// attempt's other nodes stopped beating (their ranks ended) and returns. The batch host counts as
// alive while its own ranks beat, whatever happened to its supervisor. Returns nullopt, having
// recorded nothing, once `cancelled()` is true (the batch host's supervisor stopped this watcher).
std::optional<Takeover> await_takeover(const std::string& run_dir, double peer_timeout_s,
                                       const std::string& batch_host, const std::string& own_host, Clock& clock,
                                       const std::function<bool()>& cancelled, const Say& say);

}  // namespace trainrt::supervise
