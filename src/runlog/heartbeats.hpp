#pragma once
// Per-node liveness in the run directory (heartbeats/<host>): one process per node rewrites its
// node's file every few seconds with its wall-clock time. A node whose file stops changing is dead
// or hung, whatever Slurm says yet: the survivors' watchdog ends the step on it (failure.
// peer_timeout) and after-step excludes it from the relaunch. Clocks of the nodes are assumed to
// agree to well under the timeout (NTP), as Slurm itself assumes.
#include <optional>
#include <string>
#include <vector>

namespace trainrt::runlog {

// Rewrites `host`'s beat with `now_s` (seconds since the epoch). Throws StorageError.
void write_heartbeat(const std::string& run_dir, const std::string& host, double now_s);

// `host`'s last beat; nullopt when it has none or it cannot be read.
std::optional<double> read_heartbeat(const std::string& run_dir, const std::string& host);

struct SilentHost {
    std::string host;
    double silent_s = 0;  // seconds from its last beat (or `since`, if later) to `now_s`
};

// The hosts whose last beat, counted from `since_s` when older or missing, is more than
// `limit_s` before `now_s`.
std::vector<SilentHost> silent_hosts(const std::string& run_dir, const std::vector<std::string>& hosts,
                                     double since_s, double now_s, double limit_s);

// The relaunch wrapper's own beat (slurm/trainrt-srun on the batch host, heartbeats/.wrapper): its
// host, when the step it waits for was launched, and the time. A watcher step on another node
// takes over the job when it goes silent (docs/guides/slurm.md, "Losing the batch host").
struct WrapperBeat {
    std::string host;
    double step_started = 0;  // seconds since the epoch
    double time = 0;
};
void write_wrapper_beat(const std::string& run_dir, const WrapperBeat& beat);
std::optional<WrapperBeat> read_wrapper_beat(const std::string& run_dir);

// heartbeats/.takeover: the host of the watcher that took the job over from a silent wrapper. A
// wrapper that finds it (it was hung, not dead) launches nothing more. A new allocation's
// wrapper removes it.
void write_takeover(const std::string& run_dir, const std::string& host, double now_s);
std::optional<std::string> read_takeover(const std::string& run_dir);
void remove_takeover(const std::string& run_dir);

// Seconds between two beats for a peer timeout: several beats fit in the timeout, and a beat
// costs the filesystem one small durable write per node.
double heartbeat_interval(double peer_timeout_s);

}  // namespace trainrt::runlog
