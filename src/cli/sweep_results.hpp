#pragma once
// `trainrt results SWEEP_DIR`: a sweep (a directory `trainrt tune` wrote sweep.json into) as Ray
// Tune's ResultGrid: one row per trial (its values, status, attempts, iterations, last and best
// tune.metric, time), and the best trial with its best checkpoint. Each trial's figures come
// from its own run directory through build_report, as `trainrt results` gives them for a run.
#include <string>

#include <nlohmann/json.hpp>

namespace trainrt::cli {

bool is_sweep_dir(const std::string& dir);

// The run directory of trial `name` of the sweep in `sweep_dir`.
std::string trial_run_dir(const std::string& sweep_dir, const std::string& name);

// {path, metric, mode, trials: [...], best_trial, best_metric, best_checkpoint, status}.
nlohmann::ordered_json build_sweep_report(const std::string& sweep_dir);

std::string sweep_summary(const nlohmann::ordered_json& report);  // a table, then the best trial
std::string sweep_csv(const nlohmann::ordered_json& report);      // one line per trial

// results_codes: running while a trial is RUNNING, stopped while one is PENDING, else finished.
int sweep_exit_code(const nlohmann::ordered_json& report);

}  // namespace trainrt::cli
