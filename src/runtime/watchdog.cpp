#include "runtime/watchdog.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "comm/collective_watch.hpp"
#include "runlog/clock.hpp"
#include "runlog/events.hpp"
#include "runlog/heartbeats.hpp"
#include "runtime/stop_signals.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"
#include "log/log.hpp"

namespace trainrt::runtime {

Watchdog::Watchdog(WatchdogSettings settings, const Context& context, std::function<std::string()> where,
                   std::unique_ptr<PeerLinks> links)
    : settings_(settings),
      context_(context),
      where_(std::move(where)),
      links_(std::move(links)),
      keeps_heartbeat_(settings.peer_timeout_s > 0 && context.local_rank == 0 && !context.run_dir.empty()),
      interval_s_(runlog::heartbeat_interval(settings.peer_timeout_s)),
      started_wall_(runlog::now_seconds()) {
    if (keeps_heartbeat_) beat(started_wall_);  // before training: a slow first step is no silence
    if (settings_.collective_timeout_s > 0 || keeps_heartbeat_ || links_) thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (links_) links_->wake();
    if (thread_.joinable()) thread_.join();
}  // then the links say goodbye

void Watchdog::loop() {
    const double collective = settings_.collective_timeout_s > 0 ? settings_.collective_timeout_s / 4 : 1.0;
    const double period = std::clamp(std::min(collective, interval_s_ / 2), 0.05, 1.0);
    while (!pause(period)) {
        if (keeps_heartbeat_) beat(runlog::now_seconds());
        auto in_flight = comm::collective_in_flight();
        if (!in_flight) continue;
        const double blocked = monotonic_seconds() - in_flight->since;
        if (settings_.collective_timeout_s > 0 && blocked > settings_.collective_timeout_s)
            fire(fmt::format("watchdog: blocked {:.1f} s in {} at {}: another rank is stuck or gone; ending "
                             "the step ([failure] collective_timeout = {} s)",
                             blocked, in_flight->name, where_(), settings_.collective_timeout_s),
                 "collective_timeout");
        if (keeps_heartbeat_ && blocked > interval_s_) check_peers(blocked, in_flight->name);
    }
}

// On the links when there are any: a peer lost there ends the process at once.
bool Watchdog::pause(double seconds) {
    if (!links_) {
        std::unique_lock<std::mutex> lock(mutex_);
        return wake_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stopping_; });
    }
    const auto lost = links_->wait(seconds);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_) return true;
    }
    if (!lost.empty())
        fire(fmt::format("watchdog: the trainrt process on node(s) {} is gone (its link closed without a goodbye) "
                         "at {}: ending the step; the relaunch leaves a node out when its Slurm daemon is gone too",
                         fmt::join(lost, ", "), where_()),
             "peer_lost");
    return false;
}

// A beat that cannot be written is said once; the peers will call this node silent, which is
// right: a node that cannot write to the run directory cannot checkpoint either.
void Watchdog::beat(double now_wall) {
    if (now_wall < next_beat_) return;
    next_beat_ = now_wall + interval_s_;
    try {
        runlog::write_heartbeat(context_.run_dir, context_.hostname, now_wall);
    } catch (const Error& error) {
        if (!beat_failed_) log::warn("heartbeat not written: {}", error.what());
        beat_failed_ = true;
    }
}

void Watchdog::check_peers(double blocked_s, const std::string& collective) {
    const double now = monotonic_seconds();
    if (now < next_check_) return;
    next_check_ = now + interval_s_;
    std::vector<std::string> peers;
    for (const std::string& host : context_.hostnames)
        if (host != context_.hostname) peers.push_back(host);
    auto silent = runlog::silent_hosts(context_.run_dir, peers, started_wall_, runlog::now_seconds(),
                                       settings_.peer_timeout_s);
    if (silent.empty()) return;
    std::vector<std::string> named;
    for (const auto& host : silent) named.push_back(fmt::format("{} ({:.0f} s)", host.host, host.silent_s));
    fire(fmt::format("watchdog: no heartbeat from node(s) {} while blocked {:.1f} s in {} at {}: dead or hung; "
                     "ending the step, the relaunch excludes them ([failure] peer_timeout = {} s)",
                     fmt::join(named, ", "), blocked_s, collective, where_(), settings_.peer_timeout_s),
         "peer_timeout");
}

// The main thread is stuck inside MPI, so no clean shutdown is possible: record, then _Exit.
void Watchdog::fire(const std::string& message, const char* reason) {
    log::error("{}", message);
    try {
        if (!context_.run_dir.empty())
            runlog::append(context_.run_dir, context_,
                           runlog::FailureEvent{context_.world_rank, message, reason, exit_codes::comm, "",
                                                false, std::nullopt});
    } catch (...) {
    }
    if (links_) links_->say('F');  // the neighbours: this failure is recorded, not a lost node
    std::cout.flush();
    std::_Exit(exit_codes::comm);
}

}  // namespace trainrt::runtime
