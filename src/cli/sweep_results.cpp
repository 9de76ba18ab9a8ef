#include "cli/sweep_results.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "cli/results_report.hpp"
#include "metrics/best_trial.hpp"
#include "metrics/metric_series.hpp"
#include "runlog/run_files.hpp"
#include "runlog/sweep_record.hpp"
#include "trainrt/error.hpp"

namespace trainrt::cli {
namespace {

nlohmann::ordered_json trial_row(const std::string& dir, const runlog::TrialRecord& trial, const std::string& metric,
                                 bool maximize) {
    const std::string run_dir = trial_run_dir(dir, trial.name);
    nlohmann::ordered_json values = nlohmann::ordered_json::object();
    for (const auto& [key, value] : trial.values) values[key] = value;
    nlohmann::ordered_json row{{"name", trial.name}, {"status", runlog::status_name(trial.status)},
                               {"attempts", trial.attempts}, {"values", values}, {"iterations", 0},
                               {"last", nullptr}, {"best", nullptr}, {"time_s", nullptr}, {"checkpoint", nullptr}};
    bool started = false;  // a trial whose step failed before its run began has no run files
    for (const char* file : {runlog::kRunJson, runlog::kEvents, runlog::kResults})
        started = started || std::filesystem::exists(runlog::path_in(run_dir, file));
    if (!started) return row;
    const nlohmann::ordered_json run = build_report(run_dir);
    row["iterations"] = run["iterations"];
    if (run["metrics"].is_object() && run["metrics"].contains(metric)) row["last"] = run["metrics"][metric];
    if (auto best = metrics::best_value(metrics::metric_series(run_dir, metric), maximize)) row["best"] = *best;
    row["time_s"] = run["total_time_s"];
    if (run["best_checkpoints"].is_array() && !run["best_checkpoints"].empty())
        row["checkpoint"] = run["best_checkpoints"][0]["path"];
    else row["checkpoint"] = run["latest_checkpoint"];
    return row;
}

std::string cell(const nlohmann::ordered_json& value) {
    if (value.is_null()) return "-";
    if (value.is_number_float()) return fmt::format("{:.4g}", value.get<double>());
    if (value.is_string()) return value.get<std::string>();
    return value.dump();
}

std::string values_text(const nlohmann::ordered_json& values) {
    std::string text;
    for (const auto& [key, value] : values.items()) text += fmt::format("{}{}={}", text.empty() ? "" : " ", key, cell(value));
    return text;
}

}  // namespace

std::string trial_run_dir(const std::string& sweep_dir, const std::string& name) { return sweep_dir + "/" + name; }

bool is_sweep_dir(const std::string& dir) { return std::filesystem::exists(runlog::path_in(dir, runlog::kSweepRecord)); }

nlohmann::ordered_json build_sweep_report(const std::string& sweep_dir) {
    const runlog::SweepState state = runlog::load_state(sweep_dir);
    const bool maximize = state.mode != "min";
    nlohmann::ordered_json report{{"path", std::filesystem::absolute(sweep_dir).lexically_normal().string()},
                                  {"metric", state.metric}, {"mode", state.mode},
                                  {"trials", nlohmann::ordered_json::array()}, {"best_trial", nullptr},
                                  {"best_metric", nullptr}, {"best_checkpoint", nullptr}};
    for (const runlog::TrialRecord& trial : state.trials)
        report["trials"].push_back(trial_row(sweep_dir, trial, state.metric, maximize));
    if (const auto best = metrics::best_trial(sweep_dir, state, state.metric, state.mode, metrics::Scope::all)) {
        const nlohmann::ordered_json& row = report["trials"][best->index];
        report["best_trial"] = row["name"], report["best_metric"] = best->score, report["best_checkpoint"] = row["checkpoint"];
    }
    return report;
}

std::string sweep_summary(const nlohmann::ordered_json& report) {
    std::ostringstream out;
    out << fmt::format("sweep {}: {} trials, metric {} ({})\n", report["path"].get<std::string>(), report["trials"].size(),
                       report["metric"].get<std::string>(), report["mode"].get<std::string>());
    out << fmt::format("{:<12} {:<11} {:>5} {:>10} {:>10} {:>8}  {}\n", "trial", "status", "iters", "last", "best",
                       "time_s", "values");
    for (const auto& trial : report["trials"])
        out << fmt::format("{:<12} {:<11} {:>5} {:>10} {:>10} {:>8}  {}\n", cell(trial["name"]), cell(trial["status"]),
                           cell(trial["iterations"]), cell(trial["last"]), cell(trial["best"]),
                           trial["time_s"].is_null() ? "-" : fmt::format("{:.1f}", trial["time_s"].get<double>()),
                           values_text(trial["values"]));
    if (report["metric"].get<std::string>().empty()) out << "best: none (the sweep has no tune.metric to compare trials by)\n";
    else if (report["best_trial"].is_null()) out << "best: none yet (no trial has reported the metric)\n";
    else
        out << fmt::format("best: {} {} = {} (checkpoint {})\n", cell(report["best_trial"]), cell(report["metric"]),
                           cell(report["best_metric"]), cell(report["best_checkpoint"]));
    return out.str();
}

std::string sweep_csv(const nlohmann::ordered_json& report) {
    std::ostringstream out;
    std::vector<std::string> keys;  // every trial's (Optuna draws a trial's values when it starts)
    for (const auto& trial : report["trials"])
        for (const auto& [key, value] : trial["values"].items())
            if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    out << "trial,status,attempts,iterations,last,best,time_s,checkpoint";
    for (const std::string& key : keys) out << "," << key;
    out << "\n";
    for (const auto& trial : report["trials"]) {
        out << fmt::format("{},{},{},{},{},{},{},{}", cell(trial["name"]), cell(trial["status"]), cell(trial["attempts"]),
                           cell(trial["iterations"]), trial["last"].is_null() ? "" : trial["last"].dump(),
                           trial["best"].is_null() ? "" : trial["best"].dump(),
                           trial["time_s"].is_null() ? "" : trial["time_s"].dump(),
                           trial["checkpoint"].is_null() ? "" : cell(trial["checkpoint"]));
        for (const std::string& key : keys) out << "," << cell(trial["values"].value(key, nlohmann::ordered_json()));
        out << "\n";
    }
    return out.str();
}

int sweep_exit_code(const nlohmann::ordered_json& report) {
    bool pending = false;
    for (const auto& trial : report["trials"]) {
        if (trial["status"] == "RUNNING") return results_codes::running;
        pending = pending || trial["status"] == "PENDING";
    }
    return pending ? results_codes::stopped : results_codes::finished;
}

}  // namespace trainrt::cli
