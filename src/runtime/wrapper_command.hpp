#pragma once
// The relaunch wrapper's subcommands (`trainrt after-step`, `trainrt watch`): their own options
// before "--", the job's run arguments after it, from which they find the run directory and
// [failure] exactly as the job's ranks do.
#include <string>
#include <vector>

#include "config/lifecycle.hpp"
#include "config/loader.hpp"

namespace trainrt::runtime {

struct WrapperCommand {
    int own_argc = 0;                   // argv[0, own_argc): the subcommand's own (argv[0] its name)
    std::vector<const char*> run_argv;  // "trainrt" and the run arguments after "--"
};

WrapperCommand split_wrapper_command(int argc, const char* const argv[]);

struct WrappedJob {
    std::string run_dir;
    config::LifecycleSettings settings;
};

// Loads the run arguments as a run would (ConfigError on a bad one).
WrappedJob load_wrapped_job(const WrapperCommand& command, const std::string& embedded_name);

}  // namespace trainrt::runtime
