#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include "runlog/run_files.hpp"
#include "runtime/scheduler_pause.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;
using namespace trainrt::runtime;

namespace {

StopSettings pausing(const std::string& by, const std::string& at) {
    StopSettings settings = StopSettings::defaults();
    settings.pause_by.value = by;
    settings.pause_at.value = at;
    return settings;
}

std::string scratch_dir(const char* name) {
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("trainrt-pause-{}-{}", name, ::getpid());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / runlog::kDecisionsDir);
    return dir.string();
}

void write_verdict(const std::string& run_dir, std::int64_t point, const char* word) {
    std::ofstream(runlog::decision_path(run_dir, point)) << word << "\n";
}

}  // namespace

TEST_CASE("pause_at is a comma list of increasing integers, and needs pause_by") {
    CHECK(pause_points(pausing("epoch", "1,3,9")) == std::vector<std::int64_t>{1, 3, 9});
    CHECK(pause_points(pausing("", "")).empty());
    CHECK_THROWS_AS(pause_points(pausing("epoch", "3,1")), ConfigError);
    CHECK_THROWS_AS(pause_points(pausing("epoch", "1,x")), ConfigError);
    CHECK_THROWS_AS(pause_points(pausing("epoch", "1.5")), ConfigError);
    CHECK_THROWS_WITH(pause_points(pausing("", "1,3")), Catch::Contains("stop.pause_by"));
}

TEST_CASE("A row pauses at the highest point it reached; points passed are behind it") {
    SchedulerPause by_epoch(pausing("epoch", "1,3,9"), "/nonexistent");
    CHECK(by_epoch.active());
    CHECK_FALSE(by_epoch.reached(Metrics().set("loss", 0.5), 1));  // no epoch in the row
    CHECK(by_epoch.reached(Metrics().set("epoch", std::int64_t{1}), 1) == 1);
    CHECK_FALSE(by_epoch.reached(Metrics().set("epoch", 2.0), 2));
    CHECK(by_epoch.reached(Metrics().set("epoch", 10.0), 3) == 9);  // passed 3 and 9
    CHECK_FALSE(by_epoch.reached(Metrics().set("epoch", 11.0), 4));
    SchedulerPause by_reports(pausing("training_iteration", "2"), "/nonexistent");
    CHECK_FALSE(by_reports.reached(Metrics(), 1));
    CHECK(by_reports.reached(Metrics(), 2) == 2);
    CHECK_FALSE(SchedulerPause(StopSettings::defaults(), "/nonexistent").active());
    StopSettings with_metric = pausing("epoch", "1");
    with_metric.pause_metric.value = "accuracy";
    SchedulerPause by_metric(with_metric, "/nonexistent");
    CHECK_FALSE(by_metric.reached(Metrics().set("epoch", 1.0).set("step", 52.0), 1));  // a mid-epoch stop row
    CHECK(by_metric.reached(Metrics().set("epoch", 1.0).set("accuracy", 0.5), 2) == 1);
}

TEST_CASE("would_reach tells whether a row pauses, and spends nothing") {
    StopSettings with_metric = pausing("training_iteration", "2,4");
    with_metric.pause_metric.value = "accuracy";
    SchedulerPause pause(with_metric, "/nonexistent");
    const Metrics scored = Metrics().set("accuracy", 0.5);
    CHECK_FALSE(pause.would_reach(scored, 1));
    CHECK_FALSE(pause.would_reach(Metrics(), 2));  // a row without pause_metric does not pause
    CHECK(pause.would_reach(scored, 2));
    CHECK(pause.would_reach(scored, 2));  // asked twice: still there
    CHECK(pause.reached(scored, 2) == 2);
    CHECK_FALSE(pause.would_reach(scored, 3));
    CHECK(pause.would_reach(scored, 5));
    CHECK(pause.reached(scored, 5) == 4);
    CHECK_FALSE(pause.would_reach(scored, 6));
}

TEST_CASE("Rank 0 waits for the sweep's verdict file") {
    const std::string dir = scratch_dir("await");
    SchedulerPause pause(pausing("epoch", "1,3"), dir);
    write_verdict(dir, 1, runlog::kVerdictContinue);
    CHECK(pause.await(1) == Verdict::go_on);
    auto later = std::async(std::launch::async, [&] { return pause.await(3); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(later.wait_for(std::chrono::milliseconds(0)) == std::future_status::timeout);  // still waiting
    write_verdict(dir, 3, runlog::kVerdictStop);
    CHECK(later.get() == Verdict::stop);
    write_verdict(dir, 5, "maybe");
    CHECK_THROWS_WITH(pause.await(5), Catch::Contains("says 'maybe'"));
    std::filesystem::remove_all(dir);
}
