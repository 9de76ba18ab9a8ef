#include "supervise/step_launcher.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace trainrt::supervise {
namespace {

std::vector<std::string> joined(std::vector<std::string> first, const std::vector<std::string>& second) {
    first.insert(first.end(), second.begin(), second.end());
    return first;
}

class SrunLauncher final : public StepLauncher {
public:
    SrunLauncher(launch::SlurmClient& slurm, std::vector<std::string> options, std::vector<std::string> command,
                 launch::SpawnOptions step)
        : slurm_(slurm), options_(joined({"--kill-on-bad-exit=1"}, options)), command_(std::move(command)),
          step_(std::move(step)) {}

    std::unique_ptr<launch::Process> launch(const std::vector<std::string>& geometry) override {
        launch::StepRequest request{joined(options_, geometry), command_, step_.unset_env, step_.output_path,
                                    step_.set_env};
        if (!geometry.empty()) request.unset_env = joined(request.unset_env, launch::allocation_task_counts());
        return slurm_.start_step(request);
    }

    std::string describe(const std::vector<std::string>& geometry) const override {
        return fmt::format("srun {}", fmt::join(joined(joined(options_, geometry), command_), " "));
    }

private:
    launch::SlurmClient& slurm_;
    std::vector<std::string> options_, command_;
    launch::SpawnOptions step_;
};

class MpiexecLauncher final : public StepLauncher {
public:
    MpiexecLauncher(std::vector<std::string> options, std::vector<std::string> command, launch::SpawnOptions step)
        : argv_(joined(joined({"mpiexec"}, options), command)), step_(std::move(step)) {}

    std::unique_ptr<launch::Process> launch(const std::vector<std::string>&) override {
        return std::make_unique<launch::Child>(launch::spawn(argv_, step_));
    }

    std::string describe(const std::vector<std::string>&) const override {
        return fmt::format("{}", fmt::join(argv_, " "));
    }

private:
    std::vector<std::string> argv_;
    launch::SpawnOptions step_;
};

}  // namespace

std::unique_ptr<StepLauncher> srun_launcher(launch::SlurmClient& slurm, std::vector<std::string> srun_options,
                                            std::vector<std::string> command, launch::SpawnOptions step) {
    return std::make_unique<SrunLauncher>(slurm, std::move(srun_options), std::move(command), std::move(step));
}

std::unique_ptr<StepLauncher> mpiexec_launcher(std::vector<std::string> mpiexec_options,
                                               std::vector<std::string> command, launch::SpawnOptions step) {
    return std::make_unique<MpiexecLauncher>(std::move(mpiexec_options), std::move(command), std::move(step));
}

}  // namespace trainrt::supervise
