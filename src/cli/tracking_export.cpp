#include "cli/tracking_export.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cli/results_report.hpp"
#include "log/log.hpp"
#include "metrics/rows_file.hpp"
#include "runlog/run_files.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"
#include "workloads/python_calls.hpp"

namespace trainrt::cli {
namespace {

// A JSON file of the run; `missing` when absent, StorageError when it cannot be parsed.
nlohmann::json read_json(const std::string& path, nlohmann::json missing) {
    std::ifstream in(path);
    if (!in) return missing;
    std::stringstream text;
    text << in.rdbuf();
    try {
        return nlohmann::json::parse(text.str());
    } catch (const nlohmann::json::exception& error) {
        throw StorageError(fmt::format("tracking: {} is not JSON: {}; remove it to export the run anew", path,
                                       error.what()));
    }
}

std::int64_t last_step(const nlohmann::json& document, std::int64_t before) {
    for (const auto& point : document["points"]) before = std::max(before, point["step"].get<std::int64_t>());
    return before;
}

// trainrt._tracking.export(document); a tracker's failure a WorkloadError of its first line
// (the exception and its message, without Python's traceback).
std::string call_exporter(const nlohmann::json& document) {
    try {
        return workloads::call_python("_tracking", "export", document.dump());
    } catch (const WorkloadError& error) {
        const std::string text = error.what();
        throw WorkloadError(text.substr(0, text.find('\n')));
    }
}

}  // namespace

ExportOutcome export_run(const std::string& run_dir, const TrackingTarget& target) {
    const std::string state_path = runlog::path_in(run_dir, runlog::kTrackingState);
    const nlohmann::json state = read_json(state_path, nlohmann::json::object());
    const ExportedSoFar so_far = exported_so_far(state, target);
    const nlohmann::ordered_json report = build_report(run_dir);
    const nlohmann::json run_json = read_json(runlog::path_in(run_dir, runlog::kRunJson), nlohmann::json::object());
    const std::vector<metrics::Row> rows = metrics::read_rows(runlog::path_in(run_dir, runlog::kResults)).rows;
    const nlohmann::json document = export_document(target, so_far, {report, run_json, rows});
    const auto reply = nlohmann::json::parse(call_exporter(document));
    const ExportOutcome outcome{reply.at("run_id").get<std::string>(), document["points"].size(),
                                last_step(document, so_far.last_iteration)};
    storage::write_file_atomic(state_path,
                               with_exported(state, target, {outcome.run_id, outcome.last_iteration}).dump(2) + "\n");
    return outcome;
}

std::vector<TrackingTarget> configured_targets(const Settings& settings) {
    std::vector<TrackingTarget> targets;
    const TrackingSettings& tracking = settings.tracking;
    if (!tracking.mlflow_uri.value.empty())
        targets.push_back({TrackerKind::mlflow, tracking.mlflow_uri.value, tracking.experiment.value});
    if (!tracking.tensorboard_dir.value.empty())
        targets.push_back({TrackerKind::tensorboard, tensorboard_run_dir(tracking.tensorboard_dir.value,
                                                                         tracking.experiment.value, settings.run.name.value),
                           ""});
    return targets;
}

void export_at_run_end(const Settings& settings, const std::string& run_dir) {
    if (!storage::path_exists(runlog::path_in(run_dir, runlog::kRunJson))) return;  // ended before it began
    for (const TrackingTarget& target : configured_targets(settings)) {
        try {
            const ExportOutcome outcome = export_run(run_dir, target);
            log::info("tracking: {} rows to {} {} (up to iteration {})", outcome.points, tracker_name(target.kind),
                      target.where, outcome.last_iteration);
        } catch (const std::exception& error) {
            log::warn("tracking: the export to {} {} failed: {}; the run's files are intact: `trainrt results {} "
                      "--export {}={}` sends what is missing", tracker_name(target.kind), target.where, error.what(),
                      run_dir, tracker_name(target.kind), target.where);
        }
    }
}

}  // namespace trainrt::cli
