#include "supervise/supervised_job.hpp"

#include <filesystem>

#include "config/loader.hpp"
#include "runlog/run_dir.hpp"

namespace trainrt::supervise {

SupervisedJob load_supervised_job(const std::vector<std::string>& run_args) {
    std::vector<const char*> argv = {"trainrt"};
    for (const std::string& arg : run_args) argv.push_back(arg.c_str());
    // As an embedded program's: any train.* key is accepted here, the step checks them.
    const config::Loaded loaded =
        config::load(static_cast<int>(argv.size()), argv.data(), config::WorkloadKeys{}, "supervised");
    return {runlog::run_dir_path(RunSettings::read(loaded.config)), FailureSettings::read(loaded.config),
            LogSettings::read(loaded.config)};
}

std::vector<std::string> program_arguments(const std::vector<std::string>& command) {
    if (command.empty()) return {};
    auto arg = command.begin() + 1;
    const std::string program = std::filesystem::path(command.front()).filename().string();
    if (program.rfind("python", 0) == 0) {
        while (arg != command.end() && arg->size() > 1 && arg->front() == '-') ++arg;  // -u, -X dev ...
        if (arg != command.end()) ++arg;                                               // the script
    }
    return {arg, command.end()};
}

}  // namespace trainrt::supervise
