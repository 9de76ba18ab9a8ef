#include "metrics/run_summary.hpp"

#include "metrics/metrics_h5.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "runlog/run_files.hpp"
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
    const std::string path = runlog::path_in(run_dir, runlog::kRunJson);
    if (!storage::path_exists(path)) return nullptr;
    std::ifstream in(path);
    if (!in) throw StorageError(fmt::format("cannot read {}: check its permissions", path));
    Json run = Json::parse(in, nullptr, false);
    if (!run.is_discarded() && run.is_object()) return run;
    warnings.push_back("run.json: not a JSON object, ignored (workload, world size and score unknown)");
    return nullptr;
}

template <class T> std::string text_of(const std::optional<T>& value) { return value ? fmt::format("{}", *value) : ""; }

std::string stop_detail(const runlog::Event& record, const runlog::StopEvent& stop, const runlog::Event* requeue) {
    return fmt::format("stopped at {} ({}{}) at iteration {}, {}; {}", record.time_text, stop.reason,
                       stop.signal ? " " + *stop.signal : "", stop.step,
                       stop.checkpoint ? "checkpoint " + *stop.checkpoint : "no new checkpoint",
                       requeue != nullptr ? "requeued by " + requeue->as<runlog::RequeueEvent>()->by +
                                                ": it resumes when the job starts again"
                                          : "run or submit the same run again to resume");
}

std::string failure_detail(const runlog::Event& record, const runlog::FailureEvent& failure,
                           const runlog::Event* relaunch) {
    if (failure.final)
        return fmt::format("gave up at {}: more failures than [failure] max_failures ({} counted); fix "
                           "the cause, then resubmit to resume", record.time_text, text_of(failure.failures));
    if (relaunch != nullptr) {
        const auto& again = *relaunch->as<runlog::RelaunchEvent>();
        return fmt::format("failed at {} ({}); the wrapper relaunched the step (failure {} of at most {}): "
                           "a start record follows when it runs", record.time_text, failure.reason,
                           again.failures, again.max_failures);
    }
    return fmt::format("failed at {} ({}); no later start: the job ended, or is being relaunched",
                       record.time_text, failure.reason);
}

Json error_of(const runlog::Event& record) {
    const auto& failure = *record.as<runlog::FailureEvent>();
    Json error = {{"rank", failure.rank ? Json(*failure.rank) : Json(nullptr)},
                  {"message", failure.message},
                  {"reason", failure.reason},
                  {"time", record.time_text}};
    if (failure.exit_code) error["exit_code"] = *failure.exit_code;
    return error;
}

}  // namespace

RunRecords read_run_records(const std::string& run_dir) {
    RunRecords records;
    records.run = read_run_json(run_dir, records.warnings);
    runlog::EventLog log = runlog::read_events(run_dir);
    records.history = runlog::fold(std::move(log.events));
    records.warnings.insert(records.warnings.end(), log.warnings.begin(), log.warnings.end());
    records.rows = read_logged(run_dir, runlog::kResults, records.warnings);
    records.superseded = read_rows(runlog::path_in(run_dir, runlog::kSupersededResults)).rows;
    if (!records.rows.empty()) {  // the table is derived from result.jsonl, which is shown
        const std::string problem = metrics_h5_problem(runlog::path_in(run_dir, runlog::kMetricsH5));
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

namespace {

// A failed run's exit code: giving up is failure_limit; else the failure record's own code, or the
// root cause's (the first failure after the last start that has one).
std::optional<int> failure_exit_code(const runlog::History& history, const runlog::FailureEvent& last) {
    if (last.final) return exit_codes::failure_limit;
    if (last.exit_code) return last.exit_code;
    const std::size_t after_start = history.attempts.empty() ? 0 : history.attempts.back().start + 1;
    for (std::size_t i = after_start; i < history.events.size(); ++i)
        if (const auto* failure = history.event(i).as<runlog::FailureEvent>(); failure && failure->exit_code)
            return failure->exit_code;
    return std::nullopt;
}

}  // namespace

StatusVerdict run_status(const runlog::History& history) {
    if (!history.last_lifecycle)
        return {RunStatus::running, "no start record yet: the job is starting (or wrote rows only)"};
    const std::size_t at = *history.last_lifecycle;
    const runlog::Event& record = history.event(at);
    if (const auto* finish = record.as<runlog::FinishEvent>())
        return {RunStatus::finished, fmt::format("finished at {} after {} iterations", record.time_text,
                                                 finish->iterations), exit_codes::finished};
    if (const auto* stop = record.as<runlog::StopEvent>())
        return {RunStatus::stopped, stop_detail(record, *stop, runlog::find_after<runlog::RequeueEvent>(history, at + 1)),
                runlog::stop_exit_code(*stop)};
    if (const auto* failure = record.as<runlog::FailureEvent>())
        return {RunStatus::failed,
                failure_detail(record, *failure, runlog::find_after<runlog::RelaunchEvent>(history, at + 1)),
                failure_exit_code(history, *failure)};
    return {RunStatus::running,
            fmt::format("running since {}; if no job runs it, that attempt was killed without a record "
                        "(the next start records it as a failure)", record.time_text)};
}

Json run_error(const runlog::History& history) {
    if (!history.last_lifecycle || history.event(*history.last_lifecycle).as<runlog::FailureEvent>() == nullptr)
        return nullptr;
    const std::size_t after_start = history.attempts.empty() ? 0 : history.attempts.back().start + 1;
    const runlog::Event* first = nullptr;
    for (std::size_t i = after_start; i < history.events.size(); ++i) {
        const auto* failure = history.event(i).as<runlog::FailureEvent>();
        if (failure == nullptr) continue;
        if (failure->rank) return error_of(history.event(i));
        if (first == nullptr) first = &history.event(i);
    }
    return error_of(*first);  // the last lifecycle record is a failure after the last start
}

Json run_restarts(const runlog::History& history) {
    Json restarts = Json::array();
    for (std::size_t n = 1; n < history.attempts.size(); ++n) {
        const runlog::Attempt& attempt = history.attempts[n];
        const runlog::Event& start = history.event(attempt.start);
        Json restart = {{"attempt", n + 1}, {"time", start.time_text},
                        {"reason", start.as<runlog::StartEvent>()->reason},
                        {"restart_count", start.restart_count}, {"job_id", start.job_id},
                        {"world_size", start.world_size ? Json(*start.world_size) : Json(nullptr)},
                        {"resumed_from", nullptr}};
        if (attempt.restore) {  // the checkpoint path as recorded may be elsewhere
            const auto& restore = *history.event(*attempt.restore).as<runlog::RestoreEvent>();
            restart["resumed_from"] = {
                {"checkpoint", std::filesystem::path(restore.checkpoint).filename().string()},
                {"iteration", restore.iteration}};
        }
        restarts.push_back(std::move(restart));
    }
    return restarts;
}

Json latest_start_value(const runlog::History& history, const char* key) {
    for (auto attempt = history.attempts.rbegin(); attempt != history.attempts.rend(); ++attempt) {
        const runlog::Event& start = history.event(attempt->start);
        if (std::string(key) == "world_size" && start.world_size) return *start.world_size;
        const std::string& workload = start.as<runlog::StartEvent>()->workload;
        if (std::string(key) == "workload" && !workload.empty()) return workload;
    }
    return nullptr;
}

RunTimes run_times(const RunRecords& records, const std::vector<TimedAttempt>& attempts) {
    RunTimes times;
    for (const TimedAttempt& attempt : attempts) times.total_s += attempt.end - attempt.begin;
    if (attempts.empty()) times.total_s = rows_span(records.rows);
    for (const Row& row : records.rows) times.useful_s += number_of(row, "_time_this_iter_s", 0);
    times.attempts = static_cast<int>(attempts.size());
    return times;
}

}  // namespace trainrt::metrics
