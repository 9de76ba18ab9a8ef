#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/lifecycle.hpp"
#include "launch/slurm_commands.hpp"
#include "runtime/deadline.hpp"
#include "runtime/history.hpp"
#include "trainrt/config.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;
using nlohmann::json;

namespace {

json start(const std::string& job, int restart) {
    return {{"event", "start"}, {"job_id", job}, {"restart_count", restart}};
}

json failure(const std::string& message) { return {{"event", "failure"}, {"message", message}}; }

// A temporary run directory, removed when the test ends.
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        static int counter = 0;
        path = std::filesystem::temp_directory_path() /
               ("trainrt_lifecycle_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
};

// Every key lifecycle_settings() reads, at its default; `overrides` replace values with a source.
JobConfig lifecycle_config(const std::map<std::string, std::string>& overrides = {},
                           const std::string& source = "test.ini:7") {
    std::map<std::string, ConfigValue> values;
    for (const OptionSpec& spec : config::lifecycle_options())
        values[spec.key] = ConfigValue{spec.default_value, "default"};
    for (const auto& [key, value] : overrides) values[key] = ConfigValue{value, source};
    return JobConfig(std::move(values));
}

std::string config_error_of(const JobConfig& config) {
    try {
        config::lifecycle_settings(config);
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// runtime/history: summarize() and read_events()

TEST_CASE("history: no events is a fresh run", "[lifecycle]") {
    runtime::AttemptHistory history = runtime::summarize({});
    CHECK(history.failures == 0);
    CHECK_FALSE(history.open);
    CHECK(history.last_end.empty());
    CHECK(history.last_attempt_job.empty());
    CHECK(history.last_attempt_restart == 0);
}

TEST_CASE("history: a start alone is an open attempt without failures", "[lifecycle]") {
    runtime::AttemptHistory history = runtime::summarize({start("4711", 2)});
    CHECK(history.failures == 0);
    CHECK(history.open);
    CHECK(history.last_end.empty());
    CHECK(history.last_attempt_job == "4711");
    CHECK(history.last_attempt_restart == 2);
}

TEST_CASE("history: a numeric job id is kept as its text", "[lifecycle]") {
    runtime::AttemptHistory history =
        runtime::summarize({json{{"event", "start"}, {"job_id", 99}, {"restart_count", 1}}});
    CHECK(history.last_attempt_job == "99");
    CHECK(history.last_attempt_restart == 1);
}

TEST_CASE("history: start then stop closes the attempt", "[lifecycle]") {
    SECTION("stop for the time limit") {
        runtime::AttemptHistory history = runtime::summarize(
            {start("10", 0), json{{"event", "stop"}, {"reason", "time_limit"}}});
        CHECK(history.failures == 0);
        CHECK_FALSE(history.open);
        CHECK(history.last_end == "stop (time_limit)");
        CHECK(history.last_attempt_job == "10");
    }
    SECTION("stop on a signal names the signal") {
        runtime::AttemptHistory history = runtime::summarize(
            {start("10", 0),
             json{{"event", "stop"}, {"reason", "signal"}, {"signal", "TERM"}, {"signal_rank", 3}}});
        CHECK(history.failures == 0);
        CHECK_FALSE(history.open);
        CHECK(history.last_end == "stop (signal TERM)");
    }
    SECTION("a null signal field is treated as absent") {
        runtime::AttemptHistory history = runtime::summarize(
            {start("10", 0), json{{"event", "stop"}, {"reason", "time_limit"}, {"signal", nullptr}}});
        CHECK(history.last_end == "stop (time_limit)");
    }
}

TEST_CASE("history: several failure records of one attempt count once", "[lifecycle]") {
    runtime::AttemptHistory history = runtime::summarize(
        {start("10", 0), failure("rank 0: CUDA out of memory"), failure("rank 1: peer vanished")});
    CHECK(history.failures == 1);
    CHECK_FALSE(history.open);
    CHECK(history.last_end == "failure: rank 0: CUDA out of memory");
}

TEST_CASE("history: a start while an attempt is open counts a failure", "[lifecycle]") {
    runtime::AttemptHistory history = runtime::summarize({start("10", 0), start("10", 1)});
    CHECK(history.failures == 1);
    CHECK(history.open);
    CHECK(history.last_end == "ended without a record (node failure, SIGKILL or time limit)");
    CHECK(history.last_attempt_job == "10");
    CHECK(history.last_attempt_restart == 1);

    // Each start that finds the previous attempt still open adds one failure.
    runtime::AttemptHistory three = runtime::summarize({start("10", 0), start("10", 1), start("10", 2)});
    CHECK(three.failures == 2);
    CHECK(three.open);
}

TEST_CASE("history: the unrecorded-end failure written for an open attempt counts once", "[lifecycle]") {
    // What begin_attempt() leaves on disk when the previous attempt vanished: its start, the
    // failure it records for it, then the new start.
    runtime::AttemptHistory history = runtime::summarize(
        {start("10", 0),
         json{{"event", "failure"}, {"reason", "unrecorded_end"}, {"message", "attempt ended"}},
         start("10", 1)});
    CHECK(history.failures == 1);
    CHECK(history.open);
    CHECK(history.last_end == "failure: attempt ended");
    CHECK(history.last_attempt_restart == 1);
}

TEST_CASE("history: a failure outside an attempt counts only in the launch phase", "[lifecycle]") {
    SECTION("launch phase counts") {
        runtime::AttemptHistory history = runtime::summarize(
            {json{{"event", "failure"}, {"phase", "launch"}, {"message", "srun: error"}}});
        CHECK(history.failures == 1);
        CHECK_FALSE(history.open);
        CHECK(history.last_end == "failure: srun: error");
    }
    SECTION("launch failures of two step launches count twice") {
        runtime::AttemptHistory history = runtime::summarize(
            {json{{"event", "failure"}, {"phase", "launch"}, {"message", "first"}},
             json{{"event", "failure"}, {"phase", "launch"}, {"message", "second"}}});
        CHECK(history.failures == 2);
        CHECK(history.last_end == "failure: second");
    }
    SECTION("a stray run-phase failure with no open attempt does not count") {
        runtime::AttemptHistory history = runtime::summarize(
            {json{{"event", "failure"}, {"phase", "run"}, {"message", "late record"}}});
        CHECK(history.failures == 0);
        CHECK(history.last_end.empty());
    }
    SECTION("after a stop, a failure record does not count") {
        runtime::AttemptHistory history = runtime::summarize(
            {start("10", 0), json{{"event", "stop"}, {"reason", "time_limit"}}, failure("late")});
        CHECK(history.failures == 0);
        CHECK(history.last_end == "stop (time_limit)");
    }
}

TEST_CASE("history: finish resets everything", "[lifecycle]") {
    runtime::AttemptHistory history = runtime::summarize(
        {start("10", 0), failure("crash"), start("10", 1), start("10", 2), json{{"event", "finish"}}});
    CHECK(history.failures == 0);
    CHECK_FALSE(history.open);
    CHECK(history.last_end == "finish");
    CHECK(history.last_attempt_job.empty());
    CHECK(history.last_attempt_restart == 0);

    // A later run in the same directory starts counting from zero again.
    runtime::AttemptHistory again = runtime::summarize(
        {start("10", 0), failure("crash"), json{{"event", "finish"}}, start("11", 0), failure("x")});
    CHECK(again.failures == 1);
    CHECK(again.last_attempt_job == "11");
}

TEST_CASE("history: a final failure ends the series", "[lifecycle]") {
    std::vector<json> events = {start("10", 0), failure("a"), start("10", 1), failure("b"),
                                json{{"event", "failure"}, {"final", true},
                                     {"reason", "max_failures"}, {"message", "gave up after 2"}}};
    runtime::AttemptHistory history = runtime::summarize(events);
    CHECK(history.failures == 0);
    CHECK_FALSE(history.open);
    CHECK(history.last_end == "failure: gave up after 2");

    SECTION("a final failure while an attempt is open also resets") {
        runtime::AttemptHistory open_final = runtime::summarize(
            {start("10", 0), failure("a"), start("10", 1),
             json{{"event", "failure"}, {"final", true}, {"message", "limit"}}});
        CHECK(open_final.failures == 0);
        CHECK_FALSE(open_final.open);
        CHECK(open_final.last_end == "failure: limit");
    }
    SECTION("failures after the final one count from zero") {
        events.push_back(start("12", 0));
        events.push_back(failure("c"));
        runtime::AttemptHistory next = runtime::summarize(events);
        CHECK(next.failures == 1);
        CHECK(next.last_end == "failure: c");
        CHECK(next.last_attempt_job == "12");
    }
}

TEST_CASE("history: failures count across requeues", "[lifecycle]") {
    std::vector<json> events = {
        start("500", 0), failure("rank 2 crashed"),                          // failure 1
        start("500", 0), json{{"event", "stop"}, {"reason", "time_limit"}},  // requeued, no failure
        start("500", 1), failure("nccl timeout"), failure("nccl timeout"),   // failure 2
        start("500", 2), start("500", 2),                                    // failure 3 (unrecorded)
    };
    runtime::AttemptHistory history = runtime::summarize(events);
    CHECK(history.failures == 3);
    CHECK(history.open);
    CHECK(history.last_attempt_job == "500");
    CHECK(history.last_attempt_restart == 2);
    CHECK(history.last_end == "ended without a record (node failure, SIGKILL or time limit)");
}

TEST_CASE("history: unknown events are ignored", "[lifecycle]") {
    runtime::AttemptHistory history = runtime::summarize(
        {start("10", 0), json{{"event", "checkpoint"}, {"step", 5}},
         json{{"event", "requeue"}, {"by", "rank0"}}, json{{"no_event_key", 1}}});
    CHECK(history.failures == 0);
    CHECK(history.open);
    CHECK(history.last_end.empty());
}

TEST_CASE("history: read_events skips a torn last line", "[lifecycle]") {
    TempDir dir;
    {
        std::ofstream out(dir.path / "events.jsonl");
        out << R"({"event":"start","job_id":"7","restart_count":0})" << '\n'
            << R"({"event":"failure","message":"boom"})" << '\n'
            << R"({"event":"start","job_id":"7","restart_co)";  // torn: no closing brace, no newline
    }
    std::vector<json> events = runtime::read_events(dir.path.string());
    REQUIRE(events.size() == 2);
    CHECK(events[0].at("event") == "start");
    CHECK(events[1].at("message") == "boom");

    runtime::AttemptHistory history = runtime::summarize(events);
    CHECK(history.failures == 1);
    CHECK_FALSE(history.open);
    CHECK(history.last_end == "failure: boom");
}

TEST_CASE("history: read_events skips non-object lines and copes with no file", "[lifecycle]") {
    TempDir dir;
    CHECK(runtime::read_events(dir.path.string()).empty());
    CHECK(runtime::read_events((dir.path / "missing").string()).empty());
    {
        std::ofstream out(dir.path / "events.jsonl");
        out << "42\n\n[1,2]\n" << R"({"event":"finish"})" << "\n";
    }
    std::vector<json> events = runtime::read_events(dir.path.string());
    REQUIRE(events.size() == 1);
    CHECK(events[0].at("event") == "finish");
}

// ---------------------------------------------------------------------------------------------
// runtime/deadline: DeadlinePolicy

TEST_CASE("deadline: auto margin is 10 s + 2 x slowest step + 2 x slowest checkpoint", "[lifecycle]") {
    runtime::DeadlinePolicy policy(std::nullopt);
    CHECK(policy.margin() == Approx(10.0));
    policy.record_step(0.5);
    policy.record_step(1.5);
    policy.record_step(1.0);
    CHECK(policy.margin() == Approx(13.0));
    policy.record_checkpoint(4.0);
    policy.record_checkpoint(2.0);
    CHECK(policy.margin() == Approx(21.0));
    CHECK(policy.describe_margin().find("auto") != std::string::npos);
    CHECK(policy.describe_margin().find("21.0") != std::string::npos);
}

TEST_CASE("deadline: a configured margin ignores the measurements", "[lifecycle]") {
    runtime::DeadlinePolicy policy(30.0);
    CHECK(policy.margin() == Approx(30.0));
    policy.record_step(100.0);
    policy.record_checkpoint(100.0);
    CHECK(policy.margin() == Approx(30.0));
    CHECK(policy.describe_margin().find("30.0") != std::string::npos);
    CHECK(policy.describe_margin().find("time_margin") != std::string::npos);

    runtime::DeadlinePolicy zero(0.0);
    zero.record_step(5.0);
    CHECK(zero.margin() == Approx(0.0));
}

TEST_CASE("deadline: should_stop only with a deadline", "[lifecycle]") {
    runtime::DeadlinePolicy policy(30.0);
    CHECK_FALSE(policy.deadline().has_value());
    CHECK_FALSE(policy.should_stop(0.0));
    CHECK_FALSE(policy.should_stop(1e12));

    policy.set_deadline(1000.0);
    REQUIRE(policy.deadline().has_value());
    CHECK(*policy.deadline() == Approx(1000.0));
    CHECK_FALSE(policy.should_stop(0.0));
    CHECK_FALSE(policy.should_stop(969.0));
    CHECK(policy.should_stop(970.0));  // exactly at deadline - margin
    CHECK(policy.should_stop(2000.0));

    policy.set_deadline(std::nullopt);
    CHECK_FALSE(policy.should_stop(2000.0));
}

TEST_CASE("deadline: should_stop follows the auto margin as steps slow down", "[lifecycle]") {
    runtime::DeadlinePolicy policy(std::nullopt);
    policy.set_deadline(100.0);
    CHECK_FALSE(policy.should_stop(85.0));  // margin 10
    CHECK(policy.should_stop(90.0));
    policy.record_step(5.0);                // margin 20
    CHECK(policy.should_stop(85.0));
    CHECK_FALSE(policy.should_stop(79.0));
}

TEST_CASE("deadline: an old slow step leaves the window after 32 newer ones", "[lifecycle]") {
    runtime::DeadlinePolicy policy(std::nullopt);
    policy.record_step(50.0);
    for (int i = 0; i < 31; ++i) policy.record_step(1.0);
    CHECK(policy.margin() == Approx(110.0));  // 32 steps held: the slow one is still there
    policy.record_step(1.0);
    CHECK(policy.margin() == Approx(12.0));   // 33rd step pushes it out
}

TEST_CASE("deadline: an old slow checkpoint leaves the window after 4 newer ones", "[lifecycle]") {
    runtime::DeadlinePolicy policy(std::nullopt);
    policy.record_checkpoint(20.0);
    for (int i = 0; i < 3; ++i) policy.record_checkpoint(1.0);
    CHECK(policy.margin() == Approx(50.0));
    policy.record_checkpoint(1.0);
    CHECK(policy.margin() == Approx(12.0));
    // The step window is independent of the checkpoint window.
    policy.record_step(3.0);
    CHECK(policy.margin() == Approx(18.0));
}

// ---------------------------------------------------------------------------------------------
// launch/slurm_commands: parse_time_left() and run_program()

TEST_CASE("slurm: parse_time_left reads squeue's %L", "[lifecycle]") {
    using launch::parse_time_left;
    CHECK(parse_time_left("1-02:03:04") == std::optional<double>(93784.0));
    CHECK(parse_time_left("10-00:00:00") == std::optional<double>(864000.0));
    CHECK(parse_time_left("02:03:04") == std::optional<double>(7384.0));
    CHECK(parse_time_left("03:04") == std::optional<double>(184.0));
    CHECK(parse_time_left("0:59") == std::optional<double>(59.0));
    CHECK(parse_time_left("0:00") == std::optional<double>(0.0));
    CHECK(parse_time_left("  03:04\n") == std::optional<double>(184.0));
    CHECK_FALSE(parse_time_left("UNLIMITED").has_value());
    CHECK_FALSE(parse_time_left("NOT_SET").has_value());
    CHECK_FALSE(parse_time_left("INVALID").has_value());
    CHECK_FALSE(parse_time_left("").has_value());
    CHECK_FALSE(parse_time_left("59").has_value());
    CHECK_FALSE(parse_time_left("1-").has_value());
    CHECK_FALSE(parse_time_left("squeue: error: Invalid job id specified").has_value());
}

TEST_CASE("slurm: run_program collects output and exit code", "[lifecycle]") {
    launch::ProgramResult result = launch::run_program({"sh", "-c", "echo hi; exit 3"}, 5);
    CHECK(result.started);
    CHECK(result.exit_code == 3);
    CHECK(result.output == "hi");

    launch::ProgramResult both = launch::run_program({"sh", "-c", "echo out; echo err >&2"}, 5);
    CHECK(both.started);
    CHECK(both.exit_code == 0);
    CHECK(both.output == "out\nerr");
}

TEST_CASE("slurm: run_program reports a program it cannot start", "[lifecycle]") {
    launch::ProgramResult result = launch::run_program({"trainrt-no-such-program-4c1f"}, 5);
    CHECK_FALSE(result.started);
    CHECK(result.exit_code == -1);
    CHECK(result.output.find("trainrt-no-such-program-4c1f") != std::string::npos);

    launch::ProgramResult empty = launch::run_program({}, 5);
    CHECK_FALSE(empty.started);
    CHECK(empty.exit_code == -1);
}

TEST_CASE("slurm: run_program kills a program that outlives its timeout", "[lifecycle]") {
    launch::ProgramResult result = launch::run_program({"sleep", "5"}, 0.5);
    CHECK(result.started);
    CHECK(result.exit_code == -1);
    CHECK(result.output.find("killed") != std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// config/lifecycle: stop_signal_number() and lifecycle_settings()

TEST_CASE("config: stop_signal_number accepts catchable stop signals only", "[lifecycle]") {
    using config::stop_signal_number;
    CHECK(stop_signal_number("USR2") == std::optional<int>(SIGUSR2));
    CHECK(stop_signal_number("SIGTERM") == std::optional<int>(SIGTERM));
    CHECK(stop_signal_number("term") == std::optional<int>(SIGTERM));
    CHECK(stop_signal_number("sigusr1") == std::optional<int>(SIGUSR1));
    CHECK(stop_signal_number("12") == std::optional<int>(SIGUSR2));  // Linux numbering
    CHECK(stop_signal_number(std::to_string(SIGINT)) == std::optional<int>(SIGINT));
    CHECK(stop_signal_number("XCPU") == std::optional<int>(SIGXCPU));
    CHECK_FALSE(stop_signal_number("KILL").has_value());
    CHECK_FALSE(stop_signal_number("SIGKILL").has_value());
    CHECK_FALSE(stop_signal_number("9").has_value());
    CHECK_FALSE(stop_signal_number("SEGV").has_value());
    CHECK_FALSE(stop_signal_number("STOP").has_value());
    CHECK_FALSE(stop_signal_number("FOO").has_value());
    CHECK_FALSE(stop_signal_number("").has_value());
}

TEST_CASE("config: lifecycle defaults parse", "[lifecycle]") {
    config::LifecycleSettings settings = config::lifecycle_settings(lifecycle_config());
    CHECK(settings.stop_signals == std::vector<int>{SIGUSR2, SIGTERM});
    CHECK(settings.stop_signal_names == std::vector<std::string>{"USR2", "TERM"});
    CHECK_FALSE(settings.time_margin_s.has_value());
    CHECK(settings.max_failures == 3);
    CHECK(settings.requeue);
    CHECK(settings.collective_timeout_s == Approx(600.0));
}

TEST_CASE("config: lifecycle values parse", "[lifecycle]") {
    config::LifecycleSettings settings = config::lifecycle_settings(lifecycle_config(
        {{"stop.signals", "SIGTERM, INT,TERM"},
         {"stop.time_margin", "30"},
         {"failure.max_failures", "-1"},
         {"failure.requeue", "never"},
         {"failure.collective_timeout", "0"}}));
    CHECK(settings.stop_signals == std::vector<int>{SIGTERM, SIGINT});  // duplicate dropped
    CHECK(settings.stop_signal_names == std::vector<std::string>{"TERM", "INT"});
    REQUIRE(settings.time_margin_s.has_value());
    CHECK(*settings.time_margin_s == Approx(30.0));
    CHECK(settings.max_failures == -1);
    CHECK_FALSE(settings.requeue);
    CHECK(settings.collective_timeout_s == Approx(0.0));

    config::LifecycleSettings none = config::lifecycle_settings(
        lifecycle_config({{"stop.signals", ""}, {"stop.time_margin", "0"}}));
    CHECK(none.stop_signals.empty());
    CHECK(none.stop_signal_names.empty());
    REQUIRE(none.time_margin_s.has_value());
    CHECK(*none.time_margin_s == Approx(0.0));
}

TEST_CASE("config: a bad stop signal is a ConfigError naming key and source", "[lifecycle]") {
    JobConfig config = lifecycle_config({{"stop.signals", "USR2,KILL"}}, "jobs/train.ini:12");
    CHECK_THROWS_AS(config::lifecycle_settings(config), ConfigError);
    std::string message = config_error_of(config);
    CHECK(message.find("stop.signals") != std::string::npos);
    CHECK(message.find("jobs/train.ini:12") != std::string::npos);
    CHECK(message.find("'KILL'") != std::string::npos);
    CHECK(message.find("USR2,KILL") != std::string::npos);
}

TEST_CASE("config: a bad time margin is a ConfigError naming key and source", "[lifecycle]") {
    SECTION("negative") {
        JobConfig config = lifecycle_config({{"stop.time_margin", "-1"}}, "env TRAINRT_STOP_TIME_MARGIN");
        CHECK_THROWS_AS(config::lifecycle_settings(config), ConfigError);
        std::string message = config_error_of(config);
        CHECK(message.find("stop.time_margin") != std::string::npos);
        CHECK(message.find("env TRAINRT_STOP_TIME_MARGIN") != std::string::npos);
        CHECK(message.find("'-1'") != std::string::npos);
    }
    SECTION("not a number") {
        JobConfig config = lifecycle_config({{"stop.time_margin", "soon"}}, "command line");
        CHECK_THROWS_AS(config::lifecycle_settings(config), ConfigError);
        std::string message = config_error_of(config);
        CHECK(message.find("stop.time_margin") != std::string::npos);
        CHECK(message.find("command line") != std::string::npos);
    }
}
