#include "runtime/batch_host_watch.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "runlog/clock.hpp"
#include "runlog/events.hpp"
#include "runlog/heartbeats.hpp"
#include "runlog/history.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::runtime {
namespace {

void sleep_s(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

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
                   double say_every_s) {
    double next_say = runlog::now_seconds() + say_every_s;
    while (runlog::silent_hosts(run_dir, hosts, 0, runlog::now_seconds(), 2 * interval_s).size() < hosts.size()) {
        if (runlog::now_seconds() > next_say) {
            storage::write_stderr_line("trainrt watch: the last step's ranks on the other nodes still beat; waiting "
                                       "for them to end before relaunching");
            next_say += say_every_s;
        }
        sleep_s(interval_s / 2);
    }
}

// Seconds the batch host has been silent: the later of its wrapper's beat and its own ranks' beat
// (the node is alive while a step's ranks beat there, whatever happened to the wrapper), counted
// from `since` when later. Sets the step the wrapper launched last.
double batch_host_silence(const std::string& run_dir, const std::string& batch_host, double since,
                          double& step_started) {
    double last = since;
    if (auto beat = runlog::read_wrapper_beat(run_dir); beat && beat->host == batch_host) {
        last = std::max(last, beat->time);
        step_started = beat->step_started;
    }
    if (auto ranks = runlog::read_heartbeat(run_dir, batch_host)) last = std::max(last, *ranks);
    return runlog::now_seconds() - last;
}

}  // namespace

void keep_wrapper_beat(const std::string& run_dir, double peer_timeout_s, const std::string& host,
                       double step_started, pid_t parent) {
    const double interval = runlog::heartbeat_interval(peer_timeout_s);
    bool said = false;
    while (::getppid() == parent) {
        try {  // a storage hiccup must not end the beat: the watcher would take over a live job
            runlog::write_wrapper_beat(run_dir, {host, step_started, runlog::now_seconds()});
        } catch (const Error& error) {
            if (!said) storage::write_stderr_line(fmt::format("trainrt watch: beat not written: {}", error.what()));
            said = true;
        }
        sleep_s(interval);
    }
}

Takeover await_takeover(const std::string& run_dir, double peer_timeout_s, const std::string& batch_host,
                        const std::string& own_host) {
    const double interval = runlog::heartbeat_interval(peer_timeout_s);
    const double watching_since = runlog::now_seconds();
    Takeover takeover;
    while ((takeover.silent_s = batch_host_silence(run_dir, batch_host, watching_since, takeover.step_started)) <=
           peer_timeout_s)
        sleep_s(interval / 2);
    runlog::write_takeover(run_dir, own_host, runlog::now_seconds());
    storage::write_stderr_line(fmt::format(
        "trainrt watch: the batch host {} (its wrapper and its ranks) has been silent for {:.0f} s ([failure] "
        "peer_timeout = {:g} s): {} takes the job over", batch_host, takeover.silent_s, peer_timeout_s, own_host));
    await_silence(run_dir, last_attempt_hosts(run_dir, batch_host), interval, peer_timeout_s);
    return takeover;
}

}  // namespace trainrt::runtime
