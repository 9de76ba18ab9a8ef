#pragma once
// The start-up order of DESIGN.md: launch -> MPI (world checked) -> run directory -> workload ->
// finish. Returns the process exit code; prints one line per failure.
#include "trainrt/config.hpp"
#include "workloads/registry.hpp"

namespace trainrt::runtime {

int run_job(const JobConfig& config, const workloads::Workload& workload);

}  // namespace trainrt::runtime
