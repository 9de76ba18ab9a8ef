#pragma once
// `trainrt --config FILE [--section.key=value ...]` and trainrt::run(): loads the config, answers
// --help / --version / --print-config, then runs the job. Never throws: errors are one line on
// stderr and the exit code (README "Exit codes").
#include "workloads/registry.hpp"

namespace trainrt::runtime {

// `embedded`: the program's own training function (trainrt::run); nullptr: run.workload.
int run_main(int argc, const char* const argv[], const workloads::Workload* embedded);

std::string version_line();

}  // namespace trainrt::runtime
