#include "supervise/batch_host.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "runlog/clock.hpp"
#include "runlog/events.hpp"
#include "runlog/heartbeats.hpp"
#include "runlog/history.hpp"
#include "trainrt/error.hpp"

namespace trainrt::supervise {

WrapperBeat::WrapperBeat(std::string run_dir, double peer_timeout_s, std::string host, Say say)
    : run_dir_(std::move(run_dir)),
      host_(std::move(host)),
      interval_s_(runlog::heartbeat_interval(peer_timeout_s)),
      say_(std::move(say)),
      thread_([this] { loop(); }) {}

WrapperBeat::~WrapperBeat() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void WrapperBeat::step_launched(double step_started) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        step_started_ = step_started;
    }
    write_beat();
}

void WrapperBeat::write_beat() {
    double started = 0;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        started = step_started_;
    }
    try {
        runlog::write_wrapper_beat(run_dir_, {host_, started, runlog::now_seconds()});
    } catch (const Error& error) {
        if (!said_) say_(fmt::format("beat not written: {}", error.what()));
        said_ = true;
    }
}

void WrapperBeat::loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
        if (wake_.wait_for(lock, std::chrono::duration<double>(interval_s_), [this] { return stopping_; })) break;
        lock.unlock();
        write_beat();
        lock.lock();
    }
}

namespace {

// The hosts of the last attempt's start record, but `except`.
std::vector<std::string> last_attempt_hosts(const std::string& run_dir, const std::string& except) {
    const runlog::History history = runlog::fold(runlog::read_events(run_dir).events);
    if (history.attempts.empty()) return {};
    const auto* start = history.event(history.attempts.back().start).as<runlog::StartEvent>();
    std::vector<std::string> hosts;
    if (start != nullptr)
        for (const std::string& host : start->hosts)
            if (host != except) hosts.push_back(host);
    return hosts;
}

// Until every one of `hosts` has been silent for two beat intervals: the step's ranks there ended
// (their own peer timeout, or MPI aborted them). Relaunching while they still train would run two
// steps at once, so this waits as long as it takes, saying so every `say_every_s`.
void await_silence(const std::string& run_dir, const std::vector<std::string>& hosts, double interval_s,
                   double say_every_s, Clock& clock, const Say& say) {
    double next_say = clock.now() + say_every_s;
    while (runlog::silent_hosts(run_dir, hosts, 0, clock.now(), 2 * interval_s).size() < hosts.size()) {
        if (clock.now() > next_say) {
            say("the last step's ranks on the other nodes still beat; waiting for them to end before relaunching");
            next_say += say_every_s;
        }
        clock.sleep(interval_s / 2);
    }
}

// Seconds the batch host has been silent: the later of its supervisor's beat and its own ranks'
// beat, counted from `since` when later. Sets the step its supervisor launched last.
double batch_host_silence(const std::string& run_dir, const std::string& batch_host, double since, double now,
                          double& step_started) {
    double last = since;
    if (auto beat = runlog::read_wrapper_beat(run_dir); beat && beat->host == batch_host) {
        last = std::max(last, beat->time);
        step_started = beat->step_started;
    }
    if (auto ranks = runlog::read_heartbeat(run_dir, batch_host)) last = std::max(last, *ranks);
    return now - last;
}

}  // namespace

std::optional<Takeover> await_takeover(const std::string& run_dir, double peer_timeout_s,
                                       const std::string& batch_host, const std::string& own_host, Clock& clock,
                                       const std::function<bool()>& cancelled, const Say& say) {
    const double interval = runlog::heartbeat_interval(peer_timeout_s);
    const double watching_since = clock.now();
    say(fmt::format("{} watches the batch host {}: it takes the job over after {:g} s of silence ([failure] "
                    "peer_timeout)", own_host, batch_host, peer_timeout_s));
    Takeover takeover;
    while ((takeover.silent_s = batch_host_silence(run_dir, batch_host, watching_since, clock.now(),
                                                   takeover.step_started)) <= peer_timeout_s) {
        if (cancelled()) return std::nullopt;
        clock.sleep(interval / 2);
    }
    runlog::write_takeover(run_dir, own_host, clock.now());
    say(fmt::format("the batch host {} (its supervisor and its ranks) has been silent for {:.0f} s ([failure] "
                    "peer_timeout = {:g} s): {} takes the job over", batch_host, takeover.silent_s, peer_timeout_s,
                    own_host));
    await_silence(run_dir, last_attempt_hosts(run_dir, batch_host), interval, peer_timeout_s, clock, say);
    return takeover;
}

}  // namespace trainrt::supervise
