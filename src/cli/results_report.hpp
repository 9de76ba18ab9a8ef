#pragma once
// `trainrt results`: what a run directory says about its run (Ray's Result), as one JSON object,
// and the exit code its status maps to. Reads only files inside the directory.
#include <string>

#include <nlohmann/json.hpp>

#include "trainrt/error.hpp"

namespace trainrt::cli {

// `run_dir` must be a directory holding run.json, events.jsonl or result.jsonl. The object:
// status, status_detail, exit_code (the run's own, null while it runs), path (absolute), workload, world_size, rows, iterations, metrics (the
// last row as written, or null), latest_checkpoint, best_checkpoints, checkpoint_score, error,
// restarts, attempts, total_time_s, useful_time_s, goodput and recoveries (metrics/goodput.hpp), warnings. StorageError when a file is unreadable.
nlohmann::ordered_json build_report(const std::string& run_dir);

// `trainrt results`'s own exit code for the report's status (results_codes, trainrt/error.hpp).
int results_exit_code(const nlohmann::ordered_json& report);

}  // namespace trainrt::cli
