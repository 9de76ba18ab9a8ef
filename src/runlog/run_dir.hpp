#pragma once
// The run directory <storage_path>/<name> and its config snapshot (run.json, written once).
// Its files are named in run_files.hpp; the run record (events.jsonl) is events.hpp's.
#include <string>

#include "config/settings.hpp"
#include "trainrt/config.hpp"
#include "trainrt/context.hpp"

namespace trainrt::runlog {

std::string run_dir_path(const RunSettings& settings);

// Rank 0 only: creates the directory, snapshots the config into run.json if this is the
// run's first start. StorageError (one line) when the directory cannot be created or written.
void prepare_run_dir(const std::string& run_dir, const JobConfig& config, const RunSettings& settings,
                     const Context& context);

}  // namespace trainrt::runlog
