#pragma once
// `trainrt after-step --exit-code N --started EPOCH [--excluded NODES] [--ending] -- ARGS...`:
// asked by the relaunch wrapper (slurm/trainrt-srun) after each srun step, with the step's exit
// code, its start time and the job's own arguments (to find the run directory and [failure]).
// Records the failure when the step left none, applies max_failures, and prints
// `VERDICT EXIT_CODE` on stdout (VERDICT: done, relaunch, requeue, give_up) and one line for the
// job's output on stderr. `--ending`: the job is being requeued or cancelled; never relaunch.
// Embedded programs (trainrt::run) answer it too, with their own workload name.
#include <string>

namespace trainrt::runtime {

int after_step_main(int argc, const char* const argv[], const std::string& embedded_name);

}  // namespace trainrt::runtime
