#pragma once
// Turns a hung step into a failure, from a thread that never throws:
// - collective_timeout: this rank has been blocked in one collective for longer: one line naming
//   the collective and the step, a failure event, and the process ends (the launcher then ends the
//   step on every rank);
// - peer_timeout: the first process of each node keeps the node's heartbeat (runlog/heartbeats.hpp);
//   while it is blocked in a collective it reads the other nodes' heartbeats, and when one has been
//   silent for longer it ends the process the same way, naming the node (reason "peer_timeout"), so
//   a dead or hung node is noticed long before Slurm's SlurmdTimeout;
// - peer links (peer_links.hpp, with the heartbeats): a node whose trainrt process is gone closes
//   its links, and the process ends the same way at once, naming it (reason "peer_lost").
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "runtime/peer_links.hpp"
#include "trainrt/context.hpp"

namespace trainrt::runtime {

struct WatchdogSettings {
    double collective_timeout_s = 0;  // <= 0: no collective timeout
    double peer_timeout_s = 0;        // <= 0: no heartbeats
};

class Watchdog {
public:
    // `where` says where training stands ("step boundary 517, iteration 3"); called from the
    // watchdog thread, so it must only read atomics. Both timeouts off and no links: no thread.
    Watchdog(WatchdogSettings settings, const Context& context, std::function<std::string()> where,
             std::unique_ptr<PeerLinks> links = nullptr);
    ~Watchdog();
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

private:
    void loop();
    bool pause(double seconds);  // true once stopping
    void beat(double now_wall);
    void check_peers(double blocked_s, const std::string& collective);
    [[noreturn]] void fire(const std::string& message, const char* reason);

    WatchdogSettings settings_;
    const Context& context_;
    std::function<std::string()> where_;
    std::unique_ptr<PeerLinks> links_;
    bool keeps_heartbeat_;
    double interval_s_;      // between beats, and between peer checks
    double started_wall_;    // a peer's silence counts from here at the latest
    double next_beat_ = 0;   // wall clock
    double next_check_ = 0;  // monotonic
    bool beat_failed_ = false;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace trainrt::runtime
