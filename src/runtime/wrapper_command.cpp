#include "runtime/wrapper_command.hpp"

#include <string>

#include "runlog/run_dir.hpp"
#include "workloads/registry.hpp"

namespace trainrt::runtime {

WrapperCommand split_wrapper_command(int argc, const char* const argv[]) {
    WrapperCommand command;
    command.own_argc = 1;
    while (command.own_argc < argc && std::string(argv[command.own_argc]) != "--") ++command.own_argc;
    command.run_argv.push_back("trainrt");
    for (int i = command.own_argc + 1; i < argc; ++i) command.run_argv.push_back(argv[i]);
    return command;
}

WrappedJob load_wrapped_job(const WrapperCommand& command, const std::string& embedded_name) {
    const config::Loaded loaded = config::load(static_cast<int>(command.run_argv.size()), command.run_argv.data(),
                                               workloads::keys_by_workload(), embedded_name);
    return {runlog::run_dir_path(loaded.config), config::lifecycle_settings(loaded.config)};
}

}  // namespace trainrt::runtime
