// runlog: the run record (events.jsonl): typed events, the writer, the tolerant reader, the one
// time format and the fold into attempts and the failure budget.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runlog/clock.hpp"
#include "runlog/events.hpp"
#include "runlog/history.hpp"
#include "runlog/run_files.hpp"
#include "temp_run_dir.hpp"

using namespace trainrt;
using nlohmann::json;

namespace {

json start(const std::string& job, int restart) {
    return {{"event", "start"}, {"job_id", job}, {"restart_count", restart}};
}

json failure(const std::string& message) { return {{"event", "failure"}, {"message", message}}; }

runlog::History fold_of(const std::vector<json>& events) { return runlog::fold(runlog::parse_events(events).events); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// runlog: fold() (the failure budget's view) and read_events()

TEST_CASE("history: no events is a fresh run", "[lifecycle]") {
    runlog::History history = fold_of({});
    CHECK(history.failures == 0);
    CHECK_FALSE(history.open);
    CHECK(history.last_end.empty());
    CHECK(history.last_attempt_job.empty());
    CHECK(history.last_attempt_restart == 0);
}

TEST_CASE("history: a start alone is an open attempt without failures", "[lifecycle]") {
    runlog::History history = fold_of({start("4711", 2)});
    CHECK(history.failures == 0);
    CHECK(history.open);
    CHECK(history.last_end.empty());
    CHECK(history.last_attempt_job == "4711");
    CHECK(history.last_attempt_restart == 2);
}

TEST_CASE("history: a numeric job id is kept as its text", "[lifecycle]") {
    runlog::History history =
        fold_of({json{{"event", "start"}, {"job_id", 99}, {"restart_count", 1}}});
    CHECK(history.last_attempt_job == "99");
    CHECK(history.last_attempt_restart == 1);
}

TEST_CASE("history: start then stop closes the attempt", "[lifecycle]") {
    SECTION("stop for the time limit") {
        runlog::History history = fold_of(
            {start("10", 0), json{{"event", "stop"}, {"reason", "time_limit"}}});
        CHECK(history.failures == 0);
        CHECK_FALSE(history.open);
        CHECK(history.last_end == "stop (time_limit)");
        CHECK(history.last_attempt_job == "10");
    }
    SECTION("stop on a signal names the signal") {
        runlog::History history = fold_of(
            {start("10", 0),
             json{{"event", "stop"}, {"reason", "signal"}, {"signal", "TERM"}, {"signal_rank", 3}}});
        CHECK(history.failures == 0);
        CHECK_FALSE(history.open);
        CHECK(history.last_end == "stop (signal TERM)");
    }
    SECTION("a null signal field is treated as absent") {
        runlog::History history = fold_of(
            {start("10", 0), json{{"event", "stop"}, {"reason", "time_limit"}, {"signal", nullptr}}});
        CHECK(history.last_end == "stop (time_limit)");
    }
}

TEST_CASE("history: several failure records of one attempt count once", "[lifecycle]") {
    runlog::History history = fold_of(
        {start("10", 0), failure("rank 0: CUDA out of memory"), failure("rank 1: peer vanished")});
    CHECK(history.failures == 1);
    CHECK_FALSE(history.open);
    CHECK(history.last_end == "failure: rank 0: CUDA out of memory");
}

TEST_CASE("history: a start while an attempt is open counts a failure", "[lifecycle]") {
    runlog::History history = fold_of({start("10", 0), start("10", 1)});
    CHECK(history.failures == 1);
    CHECK(history.open);
    CHECK(history.last_end == "ended without a record (node failure, SIGKILL or time limit)");
    CHECK(history.last_attempt_job == "10");
    CHECK(history.last_attempt_restart == 1);

    // Each start that finds the previous attempt still open adds one failure.
    runlog::History three = fold_of({start("10", 0), start("10", 1), start("10", 2)});
    CHECK(three.failures == 2);
    CHECK(three.open);
}

TEST_CASE("history: the unrecorded-end failure written for an open attempt counts once", "[lifecycle]") {
    // What begin_attempt() leaves on disk when the previous attempt vanished: its start, the
    // failure it records for it, then the new start.
    runlog::History history = fold_of(
        {start("10", 0),
         json{{"event", "failure"}, {"reason", "unrecorded_end"}, {"message", "attempt ended"}},
         start("10", 1)});
    CHECK(history.failures == 1);
    CHECK(history.open);
    CHECK(history.last_end == "failure: attempt ended");
    CHECK(history.last_attempt_restart == 1);
}

TEST_CASE("history: a failure outside an attempt counts only in the launch phase", "[lifecycle]") {
    SECTION("launch phase counts on its own budget") {
        runlog::History history = fold_of(
            {json{{"event", "failure"}, {"phase", "launch"}, {"message", "srun: error"}}});
        CHECK(history.failures == 0);
        CHECK(history.launch_failures == 1);
        CHECK_FALSE(history.open);
        CHECK(history.last_end == "failure: srun: error");
    }
    SECTION("launch failures of two step launches count twice") {
        runlog::History history = fold_of(
            {json{{"event", "failure"}, {"phase", "launch"}, {"message", "first"}},
             json{{"event", "failure"}, {"phase", "launch"}, {"message", "second"}}});
        CHECK(history.launch_failures == 2);
        CHECK(history.failures == 0);
        CHECK(history.last_end == "failure: second");
    }
    SECTION("a start ends a series of launch failures; a crash after it counts as a failure") {
        runlog::History history = fold_of(
            {json{{"event", "failure"}, {"phase", "launch"}, {"message", "first"}}, start("10", 0),
             failure("crash")});
        CHECK(history.launch_failures == 0);
        CHECK(history.failures == 1);
    }
    SECTION("a stray run-phase failure with no open attempt does not count") {
        runlog::History history = fold_of(
            {json{{"event", "failure"}, {"phase", "run"}, {"message", "late record"}}});
        CHECK(history.failures == 0);
        CHECK(history.last_end.empty());
    }
    SECTION("after a stop, a failure record does not count") {
        runlog::History history = fold_of(
            {start("10", 0), json{{"event", "stop"}, {"reason", "time_limit"}}, failure("late")});
        CHECK(history.failures == 0);
        CHECK(history.last_end == "stop (time_limit)");
    }
}

TEST_CASE("history: finish resets everything", "[lifecycle]") {
    runlog::History history = fold_of(
        {start("10", 0), failure("crash"), start("10", 1), start("10", 2), json{{"event", "finish"}}});
    CHECK(history.failures == 0);
    CHECK_FALSE(history.open);
    CHECK(history.last_end == "finish");
    CHECK(history.last_attempt_job.empty());
    CHECK(history.last_attempt_restart == 0);

    // A later run in the same directory starts counting from zero again.
    runlog::History again = fold_of(
        {start("10", 0), failure("crash"), json{{"event", "finish"}}, start("11", 0), failure("x")});
    CHECK(again.failures == 1);
    CHECK(again.last_attempt_job == "11");
}

TEST_CASE("history: every failed attempt stays recorded, and the attempts' seconds add up", "[lifecycle]") {
    auto at = [](json event, const char* time) {
        event["time"] = time;
        return event;
    };
    runlog::History history = fold_of(
        {at(start("10", 0), "2026-11-22T09:00:00.000Z"), at(json{{"event", "failure"}, {"rank", 0}, {"message", "crash"}}, "2026-11-22T09:10:00.000Z"),
         at(start("10", 1), "2026-11-22T09:11:00.000Z"), at(json{{"event", "finish"}}, "2026-11-22T09:41:00.000Z"),
         at(start("11", 0), "2026-11-22T10:00:00.000Z"), at(start("11", 1), "2026-11-22T10:05:00.000Z"),
         at(json{{"event", "failure"}, {"rank", 0}, {"final", true}, {"message", "limit"}},
            "2026-11-22T10:06:00.000Z")});
    CHECK(history.failures == 0);  // the budget restarted after the finish and the final failure
    CHECK(history.failures_recorded == 2);
    // 10 min + 30 min + 0 (the attempt with no record of its own) + 1 min (a rank's records).
    CHECK(runlog::attempts_seconds(history) == Approx(41 * 60.0));
}

TEST_CASE("history: a final failure ends the series", "[lifecycle]") {
    std::vector<json> events = {start("10", 0), failure("a"), start("10", 1), failure("b"),
                                json{{"event", "failure"}, {"final", true},
                                     {"reason", "max_failures"}, {"message", "gave up after 2"}}};
    runlog::History history = fold_of(events);
    CHECK(history.failures == 0);
    CHECK_FALSE(history.open);
    CHECK(history.last_end == "failure: gave up after 2");

    SECTION("a final failure while an attempt is open also resets") {
        runlog::History open_final = fold_of(
            {start("10", 0), failure("a"), start("10", 1),
             json{{"event", "failure"}, {"final", true}, {"message", "limit"}}});
        CHECK(open_final.failures == 0);
        CHECK_FALSE(open_final.open);
        CHECK(open_final.last_end == "failure: limit");
    }
    SECTION("failures after the final one count from zero") {
        events.push_back(start("12", 0));
        events.push_back(failure("c"));
        runlog::History next = fold_of(events);
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
    runlog::History history = fold_of(events);
    CHECK(history.failures == 3);
    CHECK(history.open);
    CHECK(history.last_attempt_job == "500");
    CHECK(history.last_attempt_restart == 2);
    CHECK(history.last_end == "ended without a record (node failure, SIGKILL or time limit)");
}

TEST_CASE("history: unknown events are ignored", "[lifecycle]") {
    runlog::History history = fold_of(
        {start("10", 0), json{{"event", "checkpoint"}, {"step", 5}},
         json{{"event", "requeue"}, {"by", "rank0"}}, json{{"no_event_key", 1}}});
    CHECK(history.failures == 0);
    CHECK(history.open);
    CHECK(history.last_end.empty());
}

TEST_CASE("history: read_events skips a torn last line", "[lifecycle]") {
    testing::TempRunDir dir;
    {
        std::ofstream out(dir.path() / "events.jsonl");
        out << R"({"event":"start","job_id":"7","restart_count":0})" << '\n'
            << R"({"event":"failure","message":"boom"})" << '\n'
            << R"({"event":"start","job_id":"7","restart_co)";  // torn: no closing brace, no newline
    }
    runlog::EventLog log = runlog::read_events(dir.str());
    REQUIRE(log.events.size() == 2);
    CHECK(std::string(log.events[0].kind()) == "start");
    CHECK(log.events[1].as<runlog::FailureEvent>()->message == "boom");
    CHECK(log.warnings.size() == 1);  // the torn line, named

    runlog::History history = runlog::fold(log.events);
    CHECK(history.failures == 1);
    CHECK_FALSE(history.open);
    CHECK(history.last_end == "failure: boom");
}

TEST_CASE("history: read_events skips non-object lines and copes with no file", "[lifecycle]") {
    testing::TempRunDir dir;
    CHECK(runlog::read_events(dir.str()).events.empty());
    CHECK(runlog::read_events((dir.path() / "missing").string()).events.empty());
    {
        std::ofstream out(dir.path() / "events.jsonl");
        out << "42\n\n[1,2]\n" << R"({"event":"finish"})" << "\n";
    }
    runlog::EventLog log = runlog::read_events(dir.str());
    REQUIRE(log.events.size() == 1);
    CHECK(std::string(log.events[0].kind()) == "finish");
}


// ---------------------------------------------------------------------------------------------
// runlog: the writer, the reader, the time format

TEST_CASE("runlog: every event kind written is read back with its fields", "[runlog]") {
    testing::TempRunDir dir;
    Context context;
    context.job_id = "4711";
    context.restart_count = 2;
    context.world_size = 3;
    runlog::StopEvent stop{"signal", 12, std::string("checkpoint_000012"), 12, {12, 12, 12}, 0.5,
                           std::string("USR2"), 1};
    const std::vector<runlog::EventBody> written = {
        runlog::StartEvent{{"n1", "n2"}, "pmix", "fashion_mlp", "first start", "", 0, 3},
        runlog::CheckpointEvent{"checkpoint_000004", 4, 1024, 0.25, true},
        runlog::RestoreEvent{"/runs/r/checkpoints/checkpoint_000004", 4, 2, 1},
        stop,
        runlog::RequeueEvent{"trainrt", 12, "signal"},
        runlog::RelaunchEvent{1, 3, 137, {"node2"}, "failure: x", "node1"},
        runlog::FailureEvent{1, "rank 1 died", "comm", 4, "", false, std::nullopt},
        runlog::FinishEvent{20},
    };
    for (const auto& body : written) runlog::append(dir.str(), context, body);
    runlog::EventLog log = runlog::read_events(dir.str());
    CHECK(log.warnings.empty());
    REQUIRE(log.events.size() == written.size());
    for (const runlog::Event& event : log.events) {
        CHECK(event.job_id == "4711");
        CHECK(event.restart_count == 2);
        CHECK(event.world_size == 3);
        REQUIRE(event.time.has_value());
        CHECK(*event.time == Approx(runlog::now_seconds()).margin(60));
    }
    CHECK(log.events[0].as<runlog::StartEvent>()->hosts == std::vector<std::string>{"n1", "n2"});
    CHECK(log.events[1].as<runlog::CheckpointEvent>()->async);
    CHECK(log.events[2].as<runlog::RestoreEvent>()->written_by_ranks == 2);
    const auto* read_stop = log.events[3].as<runlog::StopEvent>();
    REQUIRE(read_stop != nullptr);
    CHECK(read_stop->checkpoint == std::optional<std::string>("checkpoint_000012"));
    CHECK(read_stop->boundaries_by_rank == std::vector<std::int64_t>{12, 12, 12});
    CHECK(read_stop->signal_rank == std::optional<int>(1));
    CHECK(log.events[5].as<runlog::RelaunchEvent>()->excluded_nodes == std::vector<std::string>{"node2"});
    CHECK(log.events[5].as<runlog::RelaunchEvent>()->took_over_from == "node1");
    CHECK(log.events[6].as<runlog::FailureEvent>()->rank == std::optional<int>(1));
    CHECK(log.events[7].as<runlog::FinishEvent>()->iterations == 20);
    // The line keeps the names readers outside trainrt use (jq in tests, users' scripts).
    std::ifstream in(dir.path() / runlog::kEvents);
    std::string first;
    std::getline(in, first);
    const json line = json::parse(first);
    for (const char* key : {"event", "time", "job_id", "restart_count", "world_size", "hosts", "reason"})
        CHECK(line.contains(key));
}

TEST_CASE("runlog: the reader skips what it cannot use, with one warning each, never throws", "[runlog]") {
    testing::TempRunDir dir;
    {
        std::ofstream out(dir.path() / runlog::kEvents);
        out << R"({"event":"start","job_id":"7","time":"2026-11-22T09:15:00.123Z"})" << '\n'
            << R"({"event":"teleport","time":"2026-11-22T09:15:01.000Z"})" << '\n'       // unknown kind
            << R"({"event":"failure","rank":"one","message":"bad rank type"})" << '\n'   // wrong-typed field
            << R"({"event":"stop","time":12345,"reason":"signal"})" << '\n'              // wrong-typed time
            << R"({"event":42})" << '\n'                                                 // kind not a string
            << R"({"event":"finish","iterations":3)";                                    // torn last line
    }
    runlog::EventLog log = runlog::read_events(dir.str());
    REQUIRE(log.events.size() == 3);
    CHECK(std::string(log.events[0].kind()) == "start");
    CHECK(log.events[0].time == Approx(*runlog::parse_time("2026-11-22T09:15:00.123Z")));
    const auto* failure = log.events[1].as<runlog::FailureEvent>();
    REQUIRE(failure != nullptr);
    CHECK_FALSE(failure->rank.has_value());  // the wrong-typed field reads as absent
    CHECK(failure->message == "bad rank type");
    CHECK_FALSE(log.events[2].time.has_value());
    CHECK(log.events[2].as<runlog::StopEvent>()->reason == "signal");
    REQUIRE(log.warnings.size() == 5);
    CHECK_THAT(log.warnings[0], Catch::Matchers::Contains("line 2") && Catch::Matchers::Contains("teleport"));
    CHECK_THAT(log.warnings[1], Catch::Matchers::Contains("line 3") && Catch::Matchers::Contains("'rank'"));
    CHECK_THAT(log.warnings[4], Catch::Matchers::Contains("line 6") && Catch::Matchers::Contains("torn"));
}

TEST_CASE("runlog: one time format, written and parsed back", "[runlog]") {
    CHECK(runlog::format_time(0) == "1970-01-01T00:00:00.000Z");
    CHECK(runlog::format_time(1795338900.123) == "2026-11-22T09:15:00.123Z");
    CHECK(*runlog::parse_time("2026-11-22T09:15:00.123Z") == Approx(1795338900.123));
    CHECK(*runlog::parse_time("2026-11-22T09:15:00Z") == Approx(1795338900.0));
    for (const char* bad : {"", "yesterday", "2026-11-22 09:15:00", "2026-11-22T09:15:00.123", "2026-11-22T09:15:00.123Zjunk"})
        CHECK_FALSE(runlog::parse_time(bad).has_value());
    const double now = runlog::now_seconds();
    CHECK(*runlog::parse_time(runlog::format_time(now)) == Approx(now).margin(0.001));
}

TEST_CASE("runlog: fold gives each attempt its start, its restore and its last own record", "[runlog]") {
    auto at = [](json event, const char* time) {
        event["time"] = time;
        return event;
    };
    runlog::History history = fold_of({
        at(start("9", 0), "2026-11-22T09:00:00.000Z"),
        at(json{{"event", "checkpoint"}, {"checkpoint", "checkpoint_000001"}}, "2026-11-22T09:00:10.000Z"),
        at(json{{"event", "failure"}, {"rank", 1}, {"message", "boom"}}, "2026-11-22T09:00:20.000Z"),
        at(json{{"event", "relaunch"}, {"failures", 1}}, "2026-11-22T09:00:40.000Z"),  // not its own record
        at(start("9", 0), "2026-11-22T09:01:00.000Z"),
        at(json{{"event", "restore"}, {"checkpoint", "/x/checkpoint_000001"}, {"iteration", 1}}, "2026-11-22T09:01:01.000Z"),
    });
    REQUIRE(history.attempts.size() == 2);
    CHECK(*history.attempts[0].end - *history.attempts[0].begin == Approx(20.0));
    CHECK_FALSE(history.attempts[0].restore.has_value());
    REQUIRE(history.attempts[1].restore.has_value());
    CHECK(history.event(*history.attempts[1].restore).as<runlog::RestoreEvent>()->iteration == 1);
    CHECK(history.failures == 1);
    CHECK(history.open);
    REQUIRE(history.last_lifecycle.has_value());
    CHECK(*history.last_lifecycle == 4);
}

TEST_CASE("runlog: EventTail reads what was appended since it looked, whole lines only", "[runlog]") {
    testing::TempRunDir dir;
    const std::string path = runlog::path_in(dir.str(), runlog::kEvents);
    { std::ofstream(path) << start("7", 0).dump() << "\n"; }
    runlog::EventTail tail(dir.str());  // starts at the end: the start record is old
    CHECK(tail.read_new().empty());
    { std::ofstream(path, std::ios::app) << failure("rank 3 lost").dump() << "\n" << R"({"event": "fin)"; }
    auto fresh = tail.read_new();
    REQUIRE(fresh.size() == 1);  // the torn line waits for its newline
    REQUIRE(fresh[0].as<runlog::FailureEvent>() != nullptr);
    CHECK(fresh[0].as<runlog::FailureEvent>()->message == "rank 3 lost");
    { std::ofstream(path, std::ios::app) << R"(ish", "iterations": 4})" << "\n"; }
    fresh = tail.read_new();
    REQUIRE(fresh.size() == 1);
    CHECK(std::string(fresh[0].kind()) == "finish");
    CHECK(tail.read_new().empty());
    runlog::EventTail absent((dir.path() / "nothing").string());
    CHECK(absent.read_new().empty());
}
