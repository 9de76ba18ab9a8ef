#include "launch/step_command.hpp"

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::launch {

std::vector<std::string> step_command(StepLauncher launcher, const StepShape& shape) {
    const std::string ranks = std::to_string(shape.ranks);
    if (launcher == StepLauncher::mpiexec) return {"mpiexec", "-n", ranks};
    std::vector<std::string> argv{"srun"};
    if (shape.exact) argv.push_back("--exact");
    argv.insert(argv.end(), {"-n", ranks, "--mpi=pmix"});
    if (shape.kill_on_bad_exit) argv.push_back("--kill-on-bad-exit=1");
    return argv;
}

StepLauncher step_launcher_named(const std::string& name) {
    if (name == "srun") return StepLauncher::srun;
    if (name == "mpiexec") return StepLauncher::mpiexec;
    throw ConfigError(fmt::format("launcher '{}' is neither srun nor mpiexec", name));
}

}  // namespace trainrt::launch
