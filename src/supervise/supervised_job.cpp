#include "supervise/supervised_job.hpp"

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

}  // namespace trainrt::supervise
