// Goodput from a run's records: a relaunched failure, a stop and requeue, and a finish on another
// world size, with every part worked out by hand from the times below.
#include <catch2/catch.hpp>

#include "metrics/goodput.hpp"
#include "runlog/clock.hpp"

using namespace trainrt;
using Json = nlohmann::json;

namespace {

const double kBase = *runlog::parse_time("2026-11-24T10:00:00Z");

std::string at(double seconds) { return runlog::format_time(kBase + seconds); }

Json start(double launched, double time, int world, int restart) {
    return {{"event", "start"}, {"time", at(time)}, {"launched", at(launched)}, {"job_id", "7"},
            {"restart_count", restart}, {"world_size", world}, {"reason", "first start"}};
}
Json record(const char* kind, double time, int restart, Json fields = Json::object()) {
    fields["event"] = kind, fields["time"] = at(time), fields["job_id"] = "7", fields["restart_count"] = restart;
    return fields;
}
metrics::Row row(double end, double iteration_s) {
    return {{"_timestamp", kBase + end}, {"_time_this_iter_s", iteration_s}};
}

metrics::RunRecords three_attempts() {
    const std::vector<Json> events = {
        // 1: launched 0, start 1, 2 ranks; a checkpoint (0.5 s stall) inside the second kept
        // iteration; the third iteration is done again later; the supervisor records the loss at
        // 10 and relaunches in the same allocation.
        start(0, 1, 2, 0), record("checkpoint", 3.5, 0, {{"stall_s", 0.5}}),
        record("failure", 10, 0, {{"message", "rank 1 killed"}, {"reason", "unrecorded_end"}}),
        record("relaunch", 10.5, 0),
        // 2: launched 11, start 12, restored at 13; stopped at 18 after a 0.3 s stop checkpoint.
        start(11, 12, 2, 0), record("restore", 13, 0, {{"iteration", 2}}),
        record("checkpoint", 17.8, 0, {{"stall_s", 0.3}}), record("stop", 18, 0, {{"reason", "time_limit"}}),
        // 3: requeued (another allocation), 1 rank: launched 100, start 101, restored at 101.5.
        start(100, 101, 1, 1), record("restore", 101.5, 1), record("finish", 103.2, 1)};
    metrics::RunRecords records;
    records.history = runlog::fold(runlog::parse_events(events).events);
    records.rows = {row(3, 2), row(5, 2), row(15, 3), row(17, 2), row(103, 2)};
    records.superseded = {row(7, 2)};
    return records;
}

metrics::TimeAccount account(const metrics::RunRecords& records) {
    return metrics::account_time(records, metrics::timed_attempts(records.history, records.rows, records.superseded));
}

}  // namespace

TEST_CASE("goodput: each attempt cut at its records, times its world size", "[metrics]") {
    const metrics::Goodput g = account(three_attempts()).goodput;
    CHECK(g.attempts == 3);
    // Spans: 0..11 (to the relaunch's launch) x 2, 11..18 x 2, 100..103.2 x 1.
    CHECK(g.allocated_rank_s == Approx(22 + 14 + 3.2));
    // Kept iterations from the restore on, less the stall inside: (4 - 0.5) x 2 + 4 x 2 + 1.5.
    CHECK(g.useful_rank_s == Approx(16.5));
    CHECK(g.start_up_rank_s == Approx(2 + 2 + 1));
    CHECK(g.restore_rank_s == Approx(2 + 0.5));
    CHECK(g.checkpoint_stall_rank_s == Approx(1 + 0.6));
    CHECK(g.lost_work_rank_s == Approx(4));    // the superseded iteration 5..7, x 2
    CHECK(g.detection_rank_s == Approx(6));    // last row 7 -> failure record 10, x 2
    CHECK(g.relaunch_rank_s == Approx(2));     // failure record 10 -> next launch 11, x 2
    CHECK(g.stop_rank_s == Approx(1.4));       // last row 17 -> stop 18, less 0.3 stall, x 2
    CHECK(g.other_rank_s == Approx(0.2));      // the finish's tail
    CHECK(g.between_allocations_s == Approx(82));
    const double parts = g.useful_rank_s + g.start_up_rank_s + g.restore_rank_s + g.checkpoint_stall_rank_s +
                         g.lost_work_rank_s + g.detection_rank_s + g.relaunch_rank_s + g.stop_rank_s + g.other_rank_s;
    CHECK(parts == Approx(g.allocated_rank_s));
}

TEST_CASE("goodput: json ratio, and null before any timed attempt", "[metrics]") {
    const auto json = metrics::goodput_json(account(three_attempts()).goodput);
    CHECK(json["ratio"].get<double>() == Approx(16.5 / 39.2));
    CHECK(json["lost_rank_s"]["detection"].get<double>() == Approx(6));
    CHECK(metrics::goodput_json(account(metrics::RunRecords{}).goodput)["ratio"].is_null());
}

TEST_CASE("goodput: a start record without `launched` (older runs) has no start-up part", "[metrics]") {
    metrics::RunRecords records;
    Json first = start(0, 1, 1, 0);
    first.erase("launched");
    records.history = runlog::fold(runlog::parse_events({first, record("finish", 4, 0)}).events);
    records.rows = {row(3, 2)};
    const metrics::Goodput g = account(records).goodput;
    CHECK(g.start_up_rank_s == 0);
    CHECK(g.allocated_rank_s == Approx(3));
    CHECK(g.useful_rank_s == Approx(2));
    CHECK(g.other_rank_s == Approx(1));
}

TEST_CASE("recoveries: the way back from a failure, by phase; a stop is not one", "[metrics]") {
    const auto list = account(three_attempts()).recoveries;
    REQUIRE(list.size() == 1);
    const auto& back = list[0];
    CHECK(back["attempt"] == 2);
    CHECK(back["detection_s"].get<double>() == Approx(3));        // last row 7 -> failure record 10
    CHECK(back["relaunch_s"].get<double>() == Approx(1));         // -> launch 11
    CHECK(back["start_up_s"].get<double>() == Approx(1));         // -> start 12
    CHECK(back["restore_s"].get<double>() == Approx(1));          // -> restore 13
    CHECK(back["first_iteration_s"].get<double>() == Approx(2));  // -> first row 15
    CHECK(back["training_again_s"].get<double>() == Approx(8));   // 7 -> 15
}
