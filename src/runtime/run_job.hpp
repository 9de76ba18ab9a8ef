#pragma once
// The start-up order of DESIGN.md: launch -> MPI (world checked) -> run directory -> workload ->
// finish (or stop: checkpoint, record, requeue). Returns the process exit code; prints one line
// per failure.
#include "config/lifecycle.hpp"
#include "trainrt/config.hpp"
#include "workloads/registry.hpp"

namespace trainrt::runtime {

int run_job(const JobConfig& config, const workloads::Workload& workload,
            const config::LifecycleSettings& lifecycle);

}  // namespace trainrt::runtime
