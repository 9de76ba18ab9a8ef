#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/lifecycle.hpp"
#include "runlog/clock.hpp"
#include "runlog/events.hpp"
#include "runlog/heartbeats.hpp"
#include "runtime/batch_host_watch.hpp"
#include "runtime/lifecycle.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;

namespace {

struct TempRunDir {
    std::filesystem::path path;
    TempRunDir() {
        static int counter = 0;
        path = std::filesystem::temp_directory_path() /
               ("trainrt_heartbeats_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TempRunDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    std::string str() const { return path.string(); }
};

std::vector<std::string> names(const std::vector<runlog::SilentHost>& silent) {
    std::vector<std::string> out;
    for (const auto& host : silent) out.push_back(host.host);
    return out;
}

}  // namespace

TEST_CASE("heartbeats: a beat is read back; none is nullopt", "[heartbeats]") {
    TempRunDir dir;
    runlog::write_heartbeat(dir.str(), "node1", 1700000000.25);
    REQUIRE(runlog::read_heartbeat(dir.str(), "node1").has_value());
    CHECK(*runlog::read_heartbeat(dir.str(), "node1") == Approx(1700000000.25));
    CHECK_FALSE(runlog::read_heartbeat(dir.str(), "node2").has_value());
    runlog::write_heartbeat(dir.str(), "node1", 1700000010.5);  // rewritten, not appended
    CHECK(*runlog::read_heartbeat(dir.str(), "node1") == Approx(1700000010.5));
}

TEST_CASE("heartbeats: silence counts from the last beat, or from `since` when later or missing", "[heartbeats]") {
    TempRunDir dir;
    runlog::write_heartbeat(dir.str(), "a", 1000);  // beat before `since`: an earlier attempt's
    runlog::write_heartbeat(dir.str(), "b", 1150);
    runlog::write_heartbeat(dir.str(), "c", 1195);
    const std::vector<std::string> hosts{"a", "b", "c", "never"};
    // since 1100, now 1200, limit 60: a and never silent 100 s, b 50 s, c 5 s.
    auto silent = runlog::silent_hosts(dir.str(), hosts, 1100, 1200, 60);
    CHECK(names(silent) == std::vector<std::string>{"a", "never"});
    CHECK(silent[0].silent_s == Approx(100));
    CHECK(names(runlog::silent_hosts(dir.str(), hosts, 1100, 1200, 40)) == std::vector<std::string>{"a", "b", "never"});
    CHECK(runlog::silent_hosts(dir.str(), hosts, 1190, 1200, 60).empty());
}

TEST_CASE("heartbeats: the interval fits several beats in the timeout, within 0.5..10 s", "[heartbeats]") {
    CHECK(runlog::heartbeat_interval(60) == Approx(10));
    CHECK(runlog::heartbeat_interval(30) == Approx(5));
    CHECK(runlog::heartbeat_interval(600) == Approx(10));
    CHECK(runlog::heartbeat_interval(1) == Approx(0.5));
}

TEST_CASE("after-step: a relaunch excludes the failed step's silent nodes and Slurm's", "[heartbeats]") {
    TempRunDir dir;
    Context context;
    context.world_size = 6;
    const double start = runlog::now_seconds();
    runlog::append(dir.str(), context,
                   runlog::StartEvent{{"node1", "node2", "node3"}, "pmix", "fashion_mlp", "first start", "", 0, 3});
    // node2 stopped beating 30 s before the survivors ended the step; node3's last beat is 4 s
    // older than node1's (beats are 5 s apart at peer_timeout 30).
    runlog::write_heartbeat(dir.str(), "node1", start + 40);
    runlog::write_heartbeat(dir.str(), "node2", start + 10);
    runlog::write_heartbeat(dir.str(), "node3", start + 36);
    config::LifecycleSettings settings;
    settings.peer_timeout_s = 30;
    const auto started = static_cast<std::time_t>(start) - 5;
    runtime::StepDecision decision =
        runtime::after_step(dir.str(), context, settings, 4, started, {"node4"}, false);
    CHECK(decision.verdict == runtime::StepVerdict::relaunch);
    CHECK(decision.exclude == std::vector<std::string>{"node4", "node2"});
    runlog::EventLog log = runlog::read_events(dir.str());
    REQUIRE(log.events.back().as<runlog::RelaunchEvent>() != nullptr);
    CHECK(log.events.back().as<runlog::RelaunchEvent>()->excluded_nodes == decision.exclude);

    settings.peer_timeout_s = 0;  // no heartbeats: only Slurm's list
    decision = runtime::after_step(dir.str(), context, settings, 4, started, {}, false);
    CHECK(decision.exclude.empty());
}

TEST_CASE("after-step: launches failing before trainrt starts back off on their own budget", "[heartbeats]") {
    TempRunDir dir;
    Context context;
    config::LifecycleSettings settings;
    settings.max_failures = 0;  // launch failures must not spend it
    settings.max_launch_failures = 3;
    const auto now = static_cast<std::time_t>(runlog::now_seconds());
    std::vector<double> delays;
    runtime::StepDecision decision;
    for (int launch = 1; launch <= 4; ++launch) {
        decision = runtime::after_step(dir.str(), context, settings, 1, now, {}, false);
        if (decision.verdict != runtime::StepVerdict::relaunch) break;
        delays.push_back(decision.delay_s);
    }
    CHECK(delays == std::vector<double>{2, 4, 8});
    CHECK(decision.verdict == runtime::StepVerdict::give_up);
    CHECK(decision.exit_code == exit_codes::failure_limit);
    CHECK(decision.message.find("max_launch_failures = 3") != std::string::npos);
    CHECK(runtime::launch_backoff_s(6) == Approx(60));
    CHECK(runtime::launch_backoff_s(40) == Approx(60));
}

TEST_CASE("after-step: a start ends the launch failures' series", "[heartbeats]") {
    TempRunDir dir;
    Context context;
    config::LifecycleSettings settings;
    const auto now = static_cast<std::time_t>(runlog::now_seconds());
    CHECK(runtime::after_step(dir.str(), context, settings, 1, now + 100, {}, false).delay_s == Approx(2));
    CHECK(runtime::after_step(dir.str(), context, settings, 1, now + 100, {}, false).delay_s == Approx(4));
    runlog::append(dir.str(), context, runlog::StartEvent{{"n1"}, "pmix", "fashion_mlp", "relaunch", "", 0, 3});
    runtime::StepDecision crash = runtime::after_step(dir.str(), context, settings, 137, now - 5, {}, false);
    CHECK(crash.verdict == runtime::StepVerdict::relaunch);
    CHECK(crash.delay_s == Approx(1));
    CHECK(crash.message.find("failure 1 of at most 3") != std::string::npos);
}

TEST_CASE("after-step: fewer nodes left than min_nodes requeues instead of relaunching", "[heartbeats]") {
    TempRunDir dir;
    Context context;
    const double start = runlog::now_seconds();
    runlog::append(dir.str(), context,
                   runlog::StartEvent{{"node1", "node2", "node3"}, "pmix", "fashion_mlp", "first start", "", 0, 3});
    config::LifecycleSettings settings;
    settings.min_nodes = 3;
    const auto started = static_cast<std::time_t>(start) - 5;
    runtime::StepDecision decision = runtime::after_step(dir.str(), context, settings, 137, started, {"node2"}, false, 3);
    CHECK(decision.verdict == runtime::StepVerdict::requeue);
    CHECK(decision.message.find("2 of the job's 3 nodes left") != std::string::npos);
    settings.min_nodes = 2;  // 2 left is enough
    CHECK(runtime::after_step(dir.str(), context, settings, 137, started, {"node2"}, false, 3).verdict ==
          runtime::StepVerdict::relaunch);
    settings.min_nodes = 5;  // more than the job has: a crash with no node lost still relaunches
    CHECK(runtime::after_step(dir.str(), context, settings, 137, started, {}, false, 3).verdict ==
          runtime::StepVerdict::relaunch);
}

TEST_CASE("the wrapper's beat and the takeover record are written and read back", "[lifecycle]") {
    TempRunDir dir;
    CHECK_FALSE(runlog::read_wrapper_beat(dir.str()));
    runlog::write_wrapper_beat(dir.str(), {"node1", 1700000000, 1700000042.5});
    const auto beat = runlog::read_wrapper_beat(dir.str());
    REQUIRE(beat);
    CHECK(beat->host == "node1");
    CHECK(beat->step_started == 1700000000);
    CHECK(beat->time == 1700000042.5);
    // A dot name: never a node's beat, never read as one.
    CHECK_FALSE(runlog::read_heartbeat(dir.str(), "node1"));
    CHECK_FALSE(runlog::read_takeover(dir.str()));
    runlog::write_takeover(dir.str(), "node3", 1700000100);
    CHECK(runlog::read_takeover(dir.str()) == std::optional<std::string>("node3"));
    runlog::remove_takeover(dir.str());
    CHECK_FALSE(runlog::read_takeover(dir.str()));
    runlog::remove_takeover(dir.str());  // none: nothing to do
}

TEST_CASE("watcher: takes over once the batch host's wrapper and ranks are silent for peer_timeout", "[lifecycle]") {
    TempRunDir dir;
    const double timeout = 1.0;  // beats every 0.5 s
    const double now = runlog::now_seconds();
    runlog::write_wrapper_beat(dir.str(), {"node1", now - 100, now - 30});
    const runtime::Takeover takeover = runtime::await_takeover(dir.str(), timeout, "node1", "node3");
    CHECK(takeover.step_started == Approx(now - 100));
    CHECK(takeover.silent_s > timeout);
    CHECK(runlog::now_seconds() - now < 5);  // the silence counts from this call: about a timeout
    CHECK(runlog::read_takeover(dir.str()) == std::optional<std::string>("node3"));
}

TEST_CASE("watcher: a batch host whose ranks still beat is alive, whatever its wrapper's beat", "[lifecycle]") {
    TempRunDir dir;
    const double timeout = 1.0;
    const double start = runlog::now_seconds();
    runlog::write_wrapper_beat(dir.str(), {"node1", start - 100, start - 30});
    std::atomic<bool> beating{true};
    std::atomic<double> last_beat{start};
    std::thread ranks([&] {  // node1's ranks beat for 3 s more, then the node dies
        while (beating && runlog::now_seconds() - start < 3) {
            last_beat = runlog::now_seconds();
            runlog::write_heartbeat(dir.str(), "node1", last_beat);
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    });
    runtime::await_takeover(dir.str(), timeout, "node1", "node2");
    const double took_over = runlog::now_seconds();
    beating = false;
    ranks.join();
    CHECK(took_over - last_beat > timeout);  // silent for the timeout after the last beat, not before
    CHECK(took_over - start > 3);
    CHECK(runlog::read_takeover(dir.str()) == std::optional<std::string>("node2"));
}
