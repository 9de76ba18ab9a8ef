// The supervisor's decision after a step (verdict.hpp) on real run directories.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "runlog/clock.hpp"
#include "runlog/events.hpp"
#include "runlog/heartbeats.hpp"
#include "supervise/verdict.hpp"
#include "trainrt/error.hpp"
#include "temp_run_dir.hpp"

using namespace trainrt;
using trainrt::testing::TempRunDir;
using supervise::NodeSet;

TEST_CASE("verdict: a relaunch excludes the failed step's silent nodes and Slurm's", "[supervise]") {
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
    FailureSettings settings = FailureSettings::defaults();
    settings.peer_timeout.value = 30;
    const auto started = static_cast<std::time_t>(start) - 5;
    supervise::StepDecision decision =
        supervise::decide_after_step(dir.str(), context, settings, {4, static_cast<double>(started), false}, NodeSet{"node4"});
    CHECK(decision.verdict == supervise::Verdict::relaunch);
    CHECK(decision.exclude == supervise::NodeSet{"node2", "node4"});
    runlog::EventLog log = runlog::read_events(dir.str());
    REQUIRE(log.events.back().as<runlog::RelaunchEvent>() != nullptr);
    CHECK(log.events.back().as<runlog::RelaunchEvent>()->excluded_nodes == decision.exclude.items());

    settings.peer_timeout.value = 0;  // no heartbeats: only Slurm's list
    decision = supervise::decide_after_step(dir.str(), context, settings, {4, static_cast<double>(started), false}, NodeSet{});
    CHECK(decision.exclude.empty());
}

TEST_CASE("verdict: launches failing before trainrt starts back off on their own budget", "[supervise]") {
    TempRunDir dir;
    Context context;
    FailureSettings settings = FailureSettings::defaults();
    settings.max_failures.value = 0;  // launch failures must not spend it
    settings.max_launch_failures.value = 3;
    const auto now = static_cast<std::time_t>(runlog::now_seconds());
    std::vector<double> delays;
    supervise::StepDecision decision;
    for (int launch = 1; launch <= 4; ++launch) {
        decision = supervise::decide_after_step(dir.str(), context, settings, {1, static_cast<double>(now), false}, NodeSet{});
        if (decision.verdict != supervise::Verdict::relaunch) break;
        delays.push_back(decision.delay_s);
    }
    CHECK(delays == std::vector<double>{2, 4, 8});
    CHECK(decision.verdict == supervise::Verdict::give_up);
    CHECK(decision.exit_code == exit_codes::failure_limit);
    CHECK(decision.message.find("max_launch_failures = 3") != std::string::npos);
    CHECK(supervise::launch_backoff_s(6) == Approx(60));
    CHECK(supervise::launch_backoff_s(40) == Approx(60));
}

TEST_CASE("verdict: a start ends the launch failures' series", "[supervise]") {
    TempRunDir dir;
    Context context;
    FailureSettings settings = FailureSettings::defaults();
    const auto now = static_cast<std::time_t>(runlog::now_seconds());
    CHECK(supervise::decide_after_step(dir.str(), context, settings, {1, static_cast<double>(now + 100), false}, NodeSet{}).delay_s == Approx(2));
    CHECK(supervise::decide_after_step(dir.str(), context, settings, {1, static_cast<double>(now + 100), false}, NodeSet{}).delay_s == Approx(4));
    runlog::append(dir.str(), context, runlog::StartEvent{{"n1"}, "pmix", "fashion_mlp", "relaunch", "", 0, 3});
    supervise::StepDecision crash = supervise::decide_after_step(dir.str(), context, settings, {137, static_cast<double>(now - 5), false}, NodeSet{});
    CHECK(crash.verdict == supervise::Verdict::relaunch);
    CHECK(crash.delay_s == Approx(1));
    CHECK(crash.message.find("failure 1 of at most 3") != std::string::npos);
}

TEST_CASE("verdict: fewer nodes left than min_nodes requeues instead of relaunching", "[supervise]") {
    TempRunDir dir;
    Context context;
    const double start = runlog::now_seconds();
    runlog::append(dir.str(), context,
                   runlog::StartEvent{{"node1", "node2", "node3"}, "pmix", "fashion_mlp", "first start", "", 0, 3});
    FailureSettings settings = FailureSettings::defaults();
    settings.min_nodes.value = 3;
    const auto started = static_cast<std::time_t>(start) - 5;
    supervise::StepDecision decision = supervise::decide_after_step(dir.str(), context, settings, {137, static_cast<double>(started), false}, NodeSet{"node2"}, 3);
    CHECK(decision.verdict == supervise::Verdict::requeue);
    CHECK(decision.message.find("2 of the job's 3 nodes left") != std::string::npos);
    settings.min_nodes.value = 2;  // 2 left is enough
    CHECK(supervise::decide_after_step(dir.str(), context, settings, {137, static_cast<double>(started), false}, NodeSet{"node2"}, 3).verdict ==
          supervise::Verdict::relaunch);
    settings.min_nodes.value = 5;  // more than the job has: a crash with no node lost still relaunches
    CHECK(supervise::decide_after_step(dir.str(), context, settings, {137, static_cast<double>(started), false}, NodeSet{}, 3).verdict ==
          supervise::Verdict::relaunch);
}

