#include "cli/results_report.hpp"

#include <filesystem>

#include "cli/results_checkpoints.hpp"
#include "metrics/goodput.hpp"
#include "metrics/run_summary.hpp"

namespace trainrt::cli {
namespace {

using Json = nlohmann::ordered_json;

// Absolute and normal, without a trailing slash.
std::string absolute_path(const std::string& run_dir) {
    std::string path = std::filesystem::absolute(run_dir).lexically_normal().string();
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return path;
}

// `key` of the latest start record, else of run.json, else null.
Json latest_known(const metrics::RunRecords& records, const char* key) {
    Json found = metrics::latest_start_value(records.history, key);
    if (!found.is_null()) return found;
    if (records.run.is_object() && records.run.contains(key)) return records.run[key];
    return nullptr;
}

Json score_json(const CheckpointScore& score) {
    if (score.attribute.empty()) return {{"attribute", nullptr}, {"order", "recency"}};
    return {{"attribute", score.attribute}, {"order", score.higher_is_better ? "max" : "min"}};
}

Json warnings_of(const metrics::RunRecords& records, const CheckpointsReport& checkpoints) {
    Json warnings = Json::array();
    for (const std::string& line : records.warnings) warnings.push_back(line);
    for (const std::string& line : checkpoints.warnings) warnings.push_back(line);
    return warnings;
}

}  // namespace

Json build_report(const std::string& run_dir) {
    const std::string path = absolute_path(run_dir);
    const metrics::RunRecords records = metrics::read_run_records(path);
    const metrics::StatusVerdict verdict = metrics::run_status(records.history);
    const CheckpointScore score = checkpoint_score(records.run);
    const CheckpointsReport checkpoints = report_checkpoints(path, score);
    const auto attempts = metrics::timed_attempts(records.history, records.rows, records.superseded);
    const metrics::RunTimes times = metrics::run_times(records, attempts);
    const metrics::TimeAccount account = metrics::account_time(records, attempts);
    const Json* last = records.rows.empty() ? nullptr : &records.rows.back();
    return {{"status", metrics::status_name(verdict.status)},
            {"status_detail", verdict.detail},
            {"exit_code", verdict.exit_code ? Json(*verdict.exit_code) : Json(nullptr)},
            {"path", path},
            {"workload", latest_known(records, "workload")},
            {"world_size", latest_known(records, "world_size")},
            {"rows", records.rows.size()},
            {"iterations", last != nullptr ? last->value("_training_iteration", Json(0)) : Json(0)},
            {"metrics", last != nullptr ? *last : Json(nullptr)},
            {"latest_checkpoint", checkpoints.latest},
            {"best_checkpoints", checkpoints.best},
            {"checkpoint_score", score_json(score)},
            {"error", metrics::run_error(records.history)},
            {"restarts", metrics::run_restarts(records.history)},
            {"attempts", times.attempts},
            {"total_time_s", times.total_s},
            {"useful_time_s", times.useful_s},
            {"goodput", metrics::goodput_json(account.goodput)},
            {"recoveries", account.recoveries},
            {"warnings", warnings_of(records, checkpoints)}};
}

int results_exit_code(const Json& report) {
    const std::string status = report.value("status", "");
    if (status == "finished") return results_codes::finished;
    if (status == "stopped") return results_codes::stopped;
    if (status == "failed") return results_codes::failed;
    return results_codes::running;
}

}  // namespace trainrt::cli
