#pragma once
// How the supervisor starts a step: srun inside a Slurm allocation, mpiexec outside one (a
// workstation; the sweep's trials). Both run the same program with the same arguments.
#include <memory>
#include <string>
#include <vector>

#include "launch/process.hpp"
#include "launch/slurm_client.hpp"

namespace trainrt::supervise {

class StepLauncher {
public:
    virtual ~StepLauncher() = default;
    // Starts the step with `geometry` (relaunch_geometry(): the nodes left; empty: the whole
    // allocation). LaunchError when the launcher itself cannot be started.
    virtual std::unique_ptr<launch::Process> launch(const std::vector<std::string>& geometry) = 0;
    // The command line, for the job's output.
    virtual std::string describe(const std::vector<std::string>& geometry) const = 0;
};

// srun --kill-on-bad-exit=1 OPTIONS GEOMETRY COMMAND: one dead rank ends the step on every rank
// at once. With a geometry, the batch environment's task counts are not passed on.
std::unique_ptr<StepLauncher> srun_launcher(launch::SlurmClient& slurm, std::vector<std::string> srun_options,
                                            std::vector<std::string> command);

// mpiexec OPTIONS COMMAND (OPTIONS: e.g. -n 4). A geometry is ignored: one machine.
std::unique_ptr<StepLauncher> mpiexec_launcher(std::vector<std::string> mpiexec_options,
                                               std::vector<std::string> command);

}  // namespace trainrt::supervise
