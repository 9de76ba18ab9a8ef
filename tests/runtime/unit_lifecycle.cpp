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

#include "config/settings.hpp"
#include "launch/process.hpp"
#include "launch/slurm_client.hpp"
#include "runtime/deadline.hpp"
#include "trainrt/config.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;
using nlohmann::json;

namespace {

// Every [stop] and [failure] key at its default; `overrides` replace values with a source.
JobConfig lifecycle_config(const std::map<std::string, std::string>& overrides = {},
                           const std::string& source = "test.ini:7") {
    std::map<std::string, ConfigValue> values;
    for (const auto& specs : {StopSettings::specs(), FailureSettings::specs()})
        for (const OptionSpec& spec : specs) values[spec.key] = ConfigValue{spec.default_value, "default"};
    for (const auto& [key, value] : overrides) values[key] = ConfigValue{value, source};
    return JobConfig(std::move(values));
}

struct Lifecycle {
    StopSettings stop;
    FailureSettings failure;
};
Lifecycle lifecycle_settings(const JobConfig& config) { return {StopSettings::read(config), FailureSettings::read(config)}; }

std::string config_error_of(const JobConfig& config) {
    try {
        lifecycle_settings(config);
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "";
}

}  // namespace

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
// config/settings: stop_signal_number() and the [stop] and [failure] sections

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
    Lifecycle settings = lifecycle_settings(lifecycle_config());
    CHECK(settings.stop.signals.value.numbers == std::vector<int>{SIGUSR2, SIGTERM});
    CHECK(settings.stop.signals.value.names == std::vector<std::string>{"USR2", "TERM"});
    CHECK_FALSE(settings.stop.time_margin.value.seconds.has_value());
    CHECK(settings.failure.max_failures.value == 3);
    CHECK(settings.failure.requeue.value == RequeuePolicy::automatic);
    CHECK(settings.failure.collective_timeout.value == Approx(600.0));
}

TEST_CASE("config: lifecycle values parse", "[lifecycle]") {
    Lifecycle settings = lifecycle_settings(lifecycle_config(
        {{"stop.signals", "SIGTERM, INT,TERM"},
         {"stop.time_margin", "30"},
         {"failure.max_failures", "-1"},
         {"failure.requeue", "never"},
         {"failure.collective_timeout", "0"}}));
    CHECK(settings.stop.signals.value.numbers == std::vector<int>{SIGTERM, SIGINT});  // duplicate dropped
    CHECK(settings.stop.signals.value.names == std::vector<std::string>{"TERM", "INT"});
    REQUIRE(settings.stop.time_margin.value.seconds.has_value());
    CHECK(*settings.stop.time_margin.value.seconds == Approx(30.0));
    CHECK(settings.failure.max_failures.value == -1);
    CHECK(settings.failure.requeue.value == RequeuePolicy::never);
    CHECK(settings.failure.collective_timeout.value == Approx(0.0));

    Lifecycle none = lifecycle_settings(
        lifecycle_config({{"stop.signals", ""}, {"stop.time_margin", "0"}}));
    CHECK(none.stop.signals.value.numbers.empty());
    CHECK(none.stop.signals.value.names.empty());
    REQUIRE(none.stop.time_margin.value.seconds.has_value());
    CHECK(*none.stop.time_margin.value.seconds == Approx(0.0));
}

TEST_CASE("config: a bad stop signal is a ConfigError naming key and source", "[lifecycle]") {
    JobConfig config = lifecycle_config({{"stop.signals", "USR2,KILL"}}, "jobs/train.ini:12");
    CHECK_THROWS_AS(lifecycle_settings(config), ConfigError);
    std::string message = config_error_of(config);
    CHECK(message.find("stop.signals") != std::string::npos);
    CHECK(message.find("jobs/train.ini:12") != std::string::npos);
    CHECK(message.find("'KILL'") != std::string::npos);
    CHECK(message.find("USR2,KILL") != std::string::npos);
}

TEST_CASE("config: a bad time margin is a ConfigError naming key and source", "[lifecycle]") {
    SECTION("negative") {
        JobConfig config = lifecycle_config({{"stop.time_margin", "-1"}}, "env TRAINRT_STOP_TIME_MARGIN");
        CHECK_THROWS_AS(lifecycle_settings(config), ConfigError);
        std::string message = config_error_of(config);
        CHECK(message.find("stop.time_margin") != std::string::npos);
        CHECK(message.find("env TRAINRT_STOP_TIME_MARGIN") != std::string::npos);
        CHECK(message.find("'-1'") != std::string::npos);
    }
    SECTION("not a number") {
        JobConfig config = lifecycle_config({{"stop.time_margin", "soon"}}, "command line");
        CHECK_THROWS_AS(lifecycle_settings(config), ConfigError);
        std::string message = config_error_of(config);
        CHECK(message.find("stop.time_margin") != std::string::npos);
        CHECK(message.find("command line") != std::string::npos);
    }
}
