#pragma once
// The run directory <storage_path>/<name>: run.json (config snapshot, written once),
// events.jsonl (one JSON object per start/finish/failure), result.jsonl (one per report).
#include <string>

#include <nlohmann/json.hpp>

#include "trainrt/config.hpp"
#include "trainrt/context.hpp"

namespace trainrt::storage {

std::string run_dir_path(const JobConfig& config);

// Rank 0 only: creates the directory, snapshots the config into run.json if this is the
// run's first start. StorageError (one line) when the directory cannot be created or written.
void prepare_run_dir(const std::string& run_dir, const JobConfig& config, const Context& context);

// Appends one event line {"event", "time", "job_id", "restart_count", ...fields}.
void append_event(const std::string& run_dir, const std::string& event, const Context& context,
                  nlohmann::json fields = nlohmann::json::object());

std::string iso_time_now();

}  // namespace trainrt::storage
