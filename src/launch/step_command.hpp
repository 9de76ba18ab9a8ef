#pragma once
// The one rule for the command line that starts a step of trainrt ranks: `srun --mpi=pmix -n N`
// inside a Slurm allocation (PMIx, as trainrt's batch templates: a site's MpiDefault may be none),
// `mpiexec -n N` outside one. The program and its arguments follow it. Used by a sweep's trials
// (tune/sweep_runner.cpp) and by the Python trainer's fit() from a plain python3.
#include <string>
#include <vector>

namespace trainrt::launch {

enum class StepLauncher { srun, mpiexec };

struct StepShape {
    int ranks = 1;
    bool exact = false;             // srun --exact: only the CPUs the step asks for (steps side by side)
    bool kill_on_bad_exit = false;  // srun: a rank that fails ends the step's other ranks
};

std::vector<std::string> step_command(StepLauncher launcher, const StepShape& shape);

// "srun" or "mpiexec"; ConfigError naming both otherwise.
StepLauncher step_launcher_named(const std::string& name);

}  // namespace trainrt::launch
