#include "cli/tracking_plan.hpp"

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::cli {
namespace {

constexpr const char* kTargetHelp = "give mlflow=TRACKING_URI (file:/path/mlruns, sqlite:///path.db, http://host:5000) "
                                    "or tensorboard=LOG_DIR";

// The state file's key of a destination: "mlflow file:/x/mlruns experiment", "tensorboard /x/tb".
std::string state_key(const TrackingTarget& target) {
    std::string key = tracker_name(target.kind) + " " + target.where;
    if (target.kind == TrackerKind::mlflow) key += " " + target.experiment;
    return key;
}

std::string run_name(const RunForExport& run) {
    const auto& config = run.run_json.value("config", nlohmann::json::object());
    return config.value("run.name", std::string("run"));
}

nlohmann::json rows_after(const std::vector<metrics::Row>& rows, std::int64_t last_iteration) {
    nlohmann::json points = nlohmann::json::array();
    for (const metrics::Row& row : rows) {
        const auto iteration = metrics::number_in(row, "_training_iteration");
        if (!iteration || static_cast<std::int64_t>(*iteration) <= last_iteration) continue;
        points.push_back({{"step", static_cast<std::int64_t>(*iteration)},
                          {"timestamp", metrics::number_in(row, "_timestamp").value_or(0.0)},
                          {"metrics", numeric_metrics(row)}});
    }
    return points;
}

nlohmann::json checkpoint_tags(const nlohmann::ordered_json& report) {
    nlohmann::json tags = nlohmann::json::object();
    tags["trainrt.run_dir"] = report.value("path", "");
    tags["trainrt.status"] = report.value("status", "");
    if (report.contains("latest_checkpoint") && report["latest_checkpoint"].is_object())
        tags["trainrt.checkpoint.latest"] = report["latest_checkpoint"].value("path", "");
    const auto& best = report.value("best_checkpoints", nlohmann::ordered_json::array());
    if (!best.empty() && best[0].is_object()) tags["trainrt.checkpoint.best"] = best[0].value("path", "");
    return tags;
}

}  // namespace

std::string tracker_name(TrackerKind kind) { return kind == TrackerKind::mlflow ? "mlflow" : "tensorboard"; }

std::string tensorboard_run_dir(const std::string& dir, const std::string& experiment, const std::string& run) {
    return experiment.empty() ? dir + "/" + run : dir + "/" + experiment + "/" + run;
}

TrackingTarget parse_export_target(const std::string& text) {
    const auto equals = text.find('=');
    const std::string kind = text.substr(0, equals);
    const std::string where = equals == std::string::npos ? "" : text.substr(equals + 1);
    if (kind != "mlflow" && kind != "tensorboard")
        throw ConfigError(fmt::format("results: --export {}: unknown tracker '{}'; {}", text, kind, kTargetHelp));
    if (where.empty()) throw ConfigError(fmt::format("results: --export {}: no destination; {}", text, kTargetHelp));
    return {kind == "mlflow" ? TrackerKind::mlflow : TrackerKind::tensorboard, where, ""};
}

ExportedSoFar exported_so_far(const nlohmann::json& state, const TrackingTarget& target) {
    const std::string key = state_key(target);
    if (!state.is_object() || !state.contains(key) || !state[key].is_object()) return {};
    const auto& entry = state[key];
    return {entry.value("run_id", std::string()), entry.value("last_iteration", std::int64_t{0})};
}

nlohmann::json with_exported(nlohmann::json state, const TrackingTarget& target, const ExportedSoFar& now) {
    if (!state.is_object()) state = nlohmann::json::object();
    state[state_key(target)] = {{"run_id", now.run_id}, {"last_iteration", now.last_iteration}};
    return state;
}

nlohmann::json numeric_metrics(const metrics::Row& row) {
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [name, value] : metrics::flatten(row))
        if (value.is_number() && name != "_timestamp") values[name] = value.get<double>();
    return values;
}

std::string mlflow_status(const std::string& trainrt_status) {
    if (trainrt_status == "finished") return "FINISHED";
    if (trainrt_status == "failed") return "FAILED";
    if (trainrt_status == "stopped") return "KILLED";
    return "RUNNING";
}

nlohmann::json export_document(const TrackingTarget& target, const ExportedSoFar& so_far, const RunForExport& run) {
    const std::string name = run_name(run);
    nlohmann::json document = {
        {"kind", tracker_name(target.kind)},
        {"where", target.where},
        {"experiment", target.experiment.empty() ? name : target.experiment},
        {"run_name", name},
        {"run_id", so_far.run_id},
        {"status", mlflow_status(run.report.value("status", ""))},
        {"tags", checkpoint_tags(run.report)},
        {"points", rows_after(run.rows, so_far.last_iteration)},
        {"params", nlohmann::json::object()}};
    if (so_far.run_id.empty()) document["params"] = run.run_json.value("config", nlohmann::json::object());
    return document;
}

}  // namespace trainrt::cli
