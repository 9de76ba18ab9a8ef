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
    SrunLauncher(launch::SlurmClient& slurm, std::vector<std::string> options, std::vector<std::string> command)
        : slurm_(slurm), options_(joined({"--kill-on-bad-exit=1"}, options)), command_(std::move(command)) {}

    std::unique_ptr<launch::Process> launch(const std::vector<std::string>& geometry) override {
        launch::StepRequest request{joined(options_, geometry), command_, {}, ""};
        if (!geometry.empty()) request.unset_env = launch::allocation_task_counts();
        return slurm_.start_step(request);
    }

    std::string describe(const std::vector<std::string>& geometry) const override {
        return fmt::format("srun {}", fmt::join(joined(joined(options_, geometry), command_), " "));
    }

private:
    launch::SlurmClient& slurm_;
    std::vector<std::string> options_, command_;
};

class MpiexecLauncher final : public StepLauncher {
public:
    MpiexecLauncher(std::vector<std::string> options, std::vector<std::string> command)
        : argv_(joined(joined({"mpiexec"}, options), command)) {}

    std::unique_ptr<launch::Process> launch(const std::vector<std::string>&) override {
        return std::make_unique<launch::Child>(launch::spawn(argv_));
    }

    std::string describe(const std::vector<std::string>&) const override {
        return fmt::format("{}", fmt::join(argv_, " "));
    }

private:
    std::vector<std::string> argv_;
};

}  // namespace

std::unique_ptr<StepLauncher> srun_launcher(launch::SlurmClient& slurm, std::vector<std::string> srun_options,
                                            std::vector<std::string> command) {
    return std::make_unique<SrunLauncher>(slurm, std::move(srun_options), std::move(command));
}

std::unique_ptr<StepLauncher> mpiexec_launcher(std::vector<std::string> mpiexec_options,
                                               std::vector<std::string> command) {
    return std::make_unique<MpiexecLauncher>(std::move(mpiexec_options), std::move(command));
}

}  // namespace trainrt::supervise
