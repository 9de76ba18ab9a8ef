#include "metrics/run_summary.hpp"

#include "metrics/metrics_h5.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::metrics {
namespace {

using Json = nlohmann::ordered_json;

std::vector<Row> read_logged(const std::string& run_dir, const char* file, std::vector<std::string>& warnings) {
    RowsRead read = read_rows(run_dir + "/" + file);
    if (read.torn_lines > 0)
        warnings.push_back(fmt::format("{}: {} line(s) that are not JSON skipped (torn: written while "
                                       "read, or a crash mid-append)", file, read.torn_lines));
    return std::move(read.rows);
}

Json read_run_json(const std::string& run_dir, std::vector<std::string>& warnings) {
    const std::string path = run_dir + "/run.json";
    if (!storage::path_exists(path)) return nullptr;
    std::ifstream in(path);
    if (!in) throw StorageError(fmt::format("cannot read {}: check its permissions", path));
    Json run = Json::parse(in, nullptr, false);
    if (!run.is_discarded() && run.is_object()) return run;
    warnings.push_back("run.json: not a JSON object, ignored (workload, world size and score unknown)");
    return nullptr;
}

// A field as text: strings as they are, other values as JSON, "" when absent or null.
std::string text_of(const Row& event, const char* key) {
    auto found = event.find(key);
    if (found == event.end() || found->is_null()) return "";
    return found->is_string() ? found->get<std::string>() : found->dump();
}

// A numeric field, or `fallback` when absent or not a number.
double number_of(const Row& row, const char* key, double fallback) {
    auto found = row.find(key);
    return found != row.end() && found->is_number() ? found->get<double>() : fallback;
}

bool is_lifecycle(const std::string& kind) {
    return kind == "start" || kind == "stop" || kind == "failure" || kind == "finish";
}

// Index of the last record of `kind` (any lifecycle kind when `kind` is ""); -1 when none.
std::ptrdiff_t last_index(const std::vector<Row>& events, const std::string& kind) {
    for (auto i = static_cast<std::ptrdiff_t>(events.size()) - 1; i >= 0; --i) {
        const std::string found = text_of(events[i], "event");
        if (kind.empty() ? is_lifecycle(found) : found == kind) return i;
    }
    return -1;
}

// The requeue or relaunch record after `at` (the annotation of a stop or a failure), or null.
const Row* annotation_after(const std::vector<Row>& events, std::ptrdiff_t at, const char* kind) {
    for (auto i = static_cast<std::size_t>(at) + 1; i < events.size(); ++i)
        if (text_of(events[i], "event") == kind) return &events[i];
    return nullptr;
}

std::string stop_detail(const Row& stop, const Row* requeue) {
    const std::string signal = text_of(stop, "signal");
    const std::string checkpoint = text_of(stop, "checkpoint");
    return fmt::format("stopped at {} ({}{}) at iteration {}, {}; {}", text_of(stop, "time"),
                       text_of(stop, "reason"), signal.empty() ? "" : " " + signal, text_of(stop, "step"),
                       checkpoint.empty() ? "no new checkpoint" : "checkpoint " + checkpoint,
                       requeue != nullptr ? "requeued by " + text_of(*requeue, "by") +
                                                ": it resumes when the job starts again"
                                          : "run or submit the same run again to resume");
}

std::string failure_detail(const Row& failure, const Row* relaunch) {
    if (failure.contains("final") && failure["final"] == true)
        return fmt::format("gave up at {}: more failures than [failure] max_failures ({} counted); fix "
                           "the cause, then resubmit to resume", text_of(failure, "time"),
                           text_of(failure, "failures"));
    if (relaunch != nullptr)
        return fmt::format("failed at {} ({}); the wrapper relaunched the step (failure {} of at most {}): "
                           "a start record follows when it runs", text_of(failure, "time"),
                           text_of(failure, "reason"), text_of(*relaunch, "failures"),
                           text_of(*relaunch, "max_failures"));
    return fmt::format("failed at {} ({}); no later start: the job ended, or is being relaunched",
                       text_of(failure, "time"), text_of(failure, "reason"));
}

Json error_of(const Row& failure) {
    Json error = {{"rank", failure.contains("rank") ? failure["rank"] : Json(nullptr)},
                  {"message", text_of(failure, "message")},
                  {"reason", text_of(failure, "reason")},
                  {"time", text_of(failure, "time")}};
    if (failure.contains("exit_code")) error["exit_code"] = failure["exit_code"];
    return error;
}


struct Attempt {
    double begin = 0;
    double end = 0;
};

// Records an attempt's own ranks write. Failure records without a rank (unrecorded_end, launch,
// max_failures) and relaunch records are written on its behalf later, by the wrapper or the next
// start, so their time says nothing about when the attempt ended.
bool own_record(const Row& event) {
    const std::string kind = text_of(event, "event");
    return kind != "relaunch" && (kind != "failure" || event.contains("rank"));
}

// One attempt per start record, from its time to its last own record.
std::vector<Attempt> attempts_of(const std::vector<Row>& events) {
    std::vector<Attempt> attempts;
    for (const Row& event : events) {
        const double time = iso_utc_seconds(text_of(event, "time"));
        if (time < 0) continue;
        if (text_of(event, "event") == "start") attempts.push_back({time, time});
        else if (!attempts.empty() && own_record(event)) attempts.back().end = std::max(attempts.back().end, time);
    }
    return attempts;
}

// Extends each attempt over its rows (those reported between its start and the next start): to
// its last row, and back to its first row's iteration start (a first iteration is timed from
// before the start record is written, and records have millisecond times).
void extend_by_rows(std::vector<Attempt>& attempts, const std::vector<Row>& rows) {
    for (const Row& row : rows) {
        const double time = number_of(row, "_timestamp", -1);
        if (time < 0) continue;
        auto after = std::upper_bound(attempts.begin(), attempts.end(), time,
                                      [](double t, const Attempt& attempt) { return t < attempt.begin; });
        if (after == attempts.begin()) continue;
        Attempt& attempt = *std::prev(after);
        attempt.end = std::max(attempt.end, time);
        attempt.begin = std::min(attempt.begin, time - number_of(row, "_time_this_iter_s", 0));
    }
}

// Without start records: the span of the rows, from the first row's iteration start to the last row.
double rows_span(const std::vector<Row>& rows) {
    double first = 0, last = 0;
    bool any = false;
    for (const Row& row : rows) {
        const double time = number_of(row, "_timestamp", -1);
        if (time < 0) continue;
        const double begin = time - number_of(row, "_time_this_iter_s", 0);
        first = any ? std::min(first, begin) : begin;
        last = any ? std::max(last, time) : time;
        any = true;
    }
    return last - first;
}

}  // namespace

RunRecords read_run_records(const std::string& run_dir) {
    RunRecords records;
    records.run = read_run_json(run_dir, records.warnings);
    records.events = read_logged(run_dir, "events.jsonl", records.warnings);
    records.rows = read_logged(run_dir, "result.jsonl", records.warnings);
    records.superseded = read_rows(run_dir + "/result.superseded.jsonl").rows;
    if (!records.rows.empty()) {  // the table is derived from result.jsonl, which is shown
        const std::string problem = metrics_h5_problem(run_dir + "/metrics.h5");
        if (!problem.empty())
            records.warnings.push_back("metrics.h5 does not open (" + problem + "); shown from result.jsonl; "
                                       "the run's next start rebuilds metrics.h5 from it");
    }
    return records;
}

const char* status_name(RunStatus status) {
    switch (status) {
        case RunStatus::finished: return "finished";
        case RunStatus::stopped: return "stopped";
        case RunStatus::failed: return "failed";
        case RunStatus::running: break;
    }
    return "running";
}

StatusVerdict run_status(const std::vector<Row>& events) {
    const std::ptrdiff_t at = last_index(events, "");
    if (at < 0) return {RunStatus::running, "no start record yet: the job is starting (or wrote rows only)"};
    const Row& record = events[static_cast<std::size_t>(at)];
    const std::string kind = text_of(record, "event");
    if (kind == "finish")
        return {RunStatus::finished, fmt::format("finished at {} after {} iterations", text_of(record, "time"),
                                                 text_of(record, "iterations"))};
    if (kind == "stop") return {RunStatus::stopped, stop_detail(record, annotation_after(events, at, "requeue"))};
    if (kind == "failure")
        return {RunStatus::failed, failure_detail(record, annotation_after(events, at, "relaunch"))};
    return {RunStatus::running,
            fmt::format("running since {}; if no job runs it, that attempt was killed without a record "
                        "(the next start records it as a failure)", text_of(record, "time"))};
}

Json run_error(const std::vector<Row>& events) {
    const std::ptrdiff_t at = last_index(events, "");
    if (at < 0 || text_of(events[static_cast<std::size_t>(at)], "event") != "failure") return nullptr;
    const Row* first = nullptr;
    for (auto i = static_cast<std::size_t>(last_index(events, "start") + 1); i < events.size(); ++i) {
        if (text_of(events[i], "event") != "failure") continue;
        if (events[i].contains("rank")) return error_of(events[i]);
        if (first == nullptr) first = &events[i];
    }
    return error_of(*first);  // the record at `at` is a failure after the last start
}

Json run_restarts(const std::vector<Row>& events) {
    Json restarts = Json::array();
    int starts = 0;
    for (const Row& event : events) {
        const std::string kind = text_of(event, "event");
        if (kind == "start" && ++starts > 1)
            restarts.push_back({{"attempt", starts}, {"time", text_of(event, "time")},
                                {"reason", text_of(event, "reason")},
                                {"restart_count", event.contains("restart_count") ? event["restart_count"] : Json(0)},
                                {"job_id", text_of(event, "job_id")},
                                {"world_size", event.contains("world_size") ? event["world_size"] : Json(nullptr)},
                                {"resumed_from", nullptr}});
        if (kind == "restore" && starts > 1)  // the checkpoint path as recorded may be elsewhere
            restarts.back()["resumed_from"] = {
                {"checkpoint", std::filesystem::path(text_of(event, "checkpoint")).filename().string()},
                {"iteration", event.contains("iteration") ? event["iteration"] : Json(nullptr)}};
    }
    return restarts;
}

double iso_utc_seconds(const std::string& text) {
    std::tm utc{};
    double seconds = 0;
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%lf", &utc.tm_year, &utc.tm_mon, &utc.tm_mday,
                    &utc.tm_hour, &utc.tm_min, &seconds) != 6)
        return -1;
    utc.tm_year -= 1900;
    utc.tm_mon -= 1;
    return static_cast<double>(timegm(&utc)) + seconds;
}

RunTimes run_times(const RunRecords& records) {
    RunTimes times;
    std::vector<Attempt> attempts = attempts_of(records.events);
    extend_by_rows(attempts, records.rows);
    extend_by_rows(attempts, records.superseded);
    for (const Attempt& attempt : attempts) times.total_s += attempt.end - attempt.begin;
    if (attempts.empty()) times.total_s = rows_span(records.rows);
    for (const Row& row : records.rows) times.useful_s += number_of(row, "_time_this_iter_s", 0);
    times.attempts = static_cast<int>(attempts.size());
    return times;
}

}  // namespace trainrt::metrics
