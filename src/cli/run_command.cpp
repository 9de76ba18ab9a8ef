#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "config/lifecycle.hpp"
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
    const bool wants_gpu = loaded.config.get_bool("scaling.use_gpu") ||
                           loaded.config.get("scaling.backend") == "nccl";
    if (wants_gpu && !TRAINRT_HAS_CUDA)
        throw ConfigError(fmt::format(
            "config: scaling.use_gpu=true / scaling.backend=nccl ({}) needs a trainrt built with "
            "CUDA and NCCL; this build has neither (see `trainrt --version`); set use_gpu = false",
            loaded.config.source("scaling.use_gpu")));
    const workloads::Workload& workload = workloads::find(loaded.config.get("run.workload"));
    const config::LifecycleSettings lifecycle = config::lifecycle_settings(loaded.config);
    return runtime::run_job(loaded.config, workload, lifecycle);
}

}  // namespace trainrt::cli
