#include <iostream>

#include "cli/commands.hpp"
#include "config/loader.hpp"
#include "runtime/run_job.hpp"
#include "trainrt/build_config.hpp"
#include "trainrt/error.hpp"
#include "workloads/registry.hpp"

namespace trainrt::cli {

int run_command(int argc, const char* const argv[]) {
    const config::WorkloadKeys keys = workloads::keys_by_workload();
    config::Loaded loaded = config::load(argc, argv, keys);
    if (loaded.flags.help) {
        std::cout << config::help_text(keys);
        return 0;
    }
    if (loaded.flags.version) {
        std::cout << "trainrt " << TRAINRT_VERSION << " (MPI: MPICH, PMIx, parallel HDF5; CUDA/NCCL: "
                  << (TRAINRT_HAS_CUDA ? "yes" : "no") << ")" << std::endl;
        return 0;
    }
    if (loaded.flags.print_config) {
        std::cout << config::print_config(loaded.config);
        return 0;
    }
    if (loaded.flags.config_file.empty() && argc <= 1)
        throw ConfigError("config: no job given; run `trainrt --config FILE` (see `trainrt --help`)");
    const workloads::Workload& workload = workloads::find(loaded.config.get("run.workload"));
    return runtime::run_job(loaded.config, workload);
}

}  // namespace trainrt::cli
