#pragma once
// What a run directory sends to an experiment tracker (MLflow, TensorBoard) and what it has sent:
// the decisions of `trainrt results --export` and of [tracking], with no tracker's library in
// them (python/trainrt/_tracking.py speaks to those). A run is exported incrementally: the run
// directory's kTrackingState file remembers, per tracker and destination, the tracker's run and the
// last training iteration sent, so a stopped, requeued and resumed run continues the same
// tracker run and sends each iteration once (rows a resume repeats are not sent again).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/rows_file.hpp"

namespace trainrt::cli {

enum class TrackerKind { mlflow, tensorboard };

struct TrackingTarget {
    TrackerKind kind = TrackerKind::mlflow;
    std::string where;       // MLflow's tracking URI, or TensorBoard's log directory
    std::string experiment;  // MLflow's experiment; empty: the run's name
};

// "mlflow=URI" or "tensorboard=DIR" (--export's value); ConfigError of one line otherwise.
TrackingTarget parse_export_target(const std::string& text);
std::string tracker_name(TrackerKind kind);

// A run's TensorBoard directory: <dir>/<experiment>/<run> (the experiment groups runs), or
// <dir>/<run> without one.
std::string tensorboard_run_dir(const std::string& dir, const std::string& experiment, const std::string& run);

// Where the export to `target` stands: the tracker's run ("" before the first export) and the
// last iteration it has.
struct ExportedSoFar {
    std::string run_id;
    std::int64_t last_iteration = 0;
};
ExportedSoFar exported_so_far(const nlohmann::json& state, const TrackingTarget& target);
nlohmann::json with_exported(nlohmann::json state, const TrackingTarget& target, const ExportedSoFar& now);

// The run as the exporter needs it: report is build_report()'s object, run_json the run's
// run.json, rows its result.jsonl. Only rows after `so_far.last_iteration` are in it; the config
// (parameters) only on the first export, MLflow's parameters being written once.
struct RunForExport {
    const nlohmann::ordered_json& report;
    const nlohmann::json& run_json;
    const std::vector<metrics::Row>& rows;
};
nlohmann::json export_document(const TrackingTarget& target, const ExportedSoFar& so_far, const RunForExport& run);

// The numeric columns of a row, as progress.csv names them, without _timestamp (the point's time).
nlohmann::json numeric_metrics(const metrics::Row& row);

// MLflow's run status for trainrt's: finished FINISHED, failed FAILED, stopped KILLED (a stopped
// run that resumes is RUNNING again), running RUNNING.
std::string mlflow_status(const std::string& trainrt_status);

}  // namespace trainrt::cli
