#pragma once
// How a step of ranks is started, the supervisor's and a sweep's trials alike (tune/sweep_runner):
// srun inside a Slurm allocation (through SlurmClient::start_step), mpiexec outside one (a
// workstation). Both run the same program with the same arguments.
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

// `step`, for both launchers: what each step gets besides its command line (the supervisor's
// steps: nothing, they share the job's output and environment; a sweep's trial: its own output
// file and environment entries).

// srun --kill-on-bad-exit=1 OPTIONS GEOMETRY COMMAND: one dead rank ends the step on every rank
// at once. With a geometry, the batch environment's task counts are not passed on either.
std::unique_ptr<StepLauncher> srun_launcher(launch::SlurmClient& slurm, std::vector<std::string> srun_options,
                                            std::vector<std::string> command, launch::SpawnOptions step = {});

// mpiexec OPTIONS COMMAND (OPTIONS: e.g. -n 4). A geometry is ignored: one machine.
std::unique_ptr<StepLauncher> mpiexec_launcher(std::vector<std::string> mpiexec_options,
                                               std::vector<std::string> command, launch::SpawnOptions step = {});

}  // namespace trainrt::supervise
