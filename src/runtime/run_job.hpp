#pragma once
// A job's start-up order: launch -> MPI (world checked against the launcher's) -> start-up checks
// on every rank (workload, keys, preflight, GPU) -> run directory and failure budget -> restore ->
// workload -> finish (or stop: checkpoint, record, requeue). Returns the process exit code; prints one line
// per failure.
#include "config/settings.hpp"
#include "trainrt/config.hpp"
#include "workloads/registry.hpp"

namespace trainrt::runtime {

// `embedded`: the program's own workload (trainrt::run); nullptr: run.workload, a built-in or a
// plugin (loaded here, on every rank, so a bad plugin is one line from rank 0).
int run_job(const JobConfig& config, const Settings& settings,
            const workloads::Workload* embedded);

}  // namespace trainrt::runtime
