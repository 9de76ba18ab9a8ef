#include "runtime/run_main.hpp"

#include <iostream>

#include <fmt/format.h>

#include "config/lifecycle.hpp"
#include "comm/gpu.hpp"
#include "config/loader.hpp"
#include "runtime/run_job.hpp"
#include "storage/posix.hpp"
#include "trainrt/build_config.hpp"
#include "trainrt/error.hpp"
#include "trainrt/plugin.hpp"
#include "trainrt/run.hpp"

namespace trainrt::runtime {
namespace {

int run_loaded(int argc, const config::Loaded& loaded, const config::WorkloadKeys& keys,
               const workloads::Workload* embedded) {
    if (loaded.flags.help) {
        std::cout << config::help_text(keys);
        return 0;
    }
    if (loaded.flags.version) {
        std::cout << version_line() << std::endl;
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
    return run_job(loaded.config, config::lifecycle_settings(loaded.config), embedded);
}

}  // namespace

std::string version_line() {
    return fmt::format("trainrt {} (plugin ABI {}; MPI: MPICH, PMIx, parallel HDF5; CUDA/NCCL: {}; LibTorch: {}; "
                       "Python: {})",
                       TRAINRT_VERSION, plugin_abi_version, comm::gpu_build_info(),
                       TRAINRT_HAS_TORCH ? "libtrainrt_torch" : "no", TRAINRT_HAS_PYTHON ? "libtrainrt_python" : "no");
}

int guarded(const std::function<int()>& body) noexcept {
    try {
        return body();
    } catch (const Error& error) {
        storage::write_stderr_line(std::string("trainrt: ") + error.what());
        return error.exit_code();
    } catch (const std::exception& error) {
        storage::write_stderr_line(std::string("trainrt: internal error: ") + error.what());
    } catch (...) {
        storage::write_stderr_line("trainrt: internal error: an exception that is not a std::exception");
    }
    return exit_codes::internal;
}

int run_main(int argc, const char* const argv[], const workloads::Workload* embedded) {
    return guarded([&] {
        const config::WorkloadKeys keys = workloads::keys_by_workload();
        config::Loaded loaded = config::load(argc, argv, keys, embedded ? embedded->name : "");
        return run_loaded(argc, loaded, keys, embedded);
    });
}

}  // namespace trainrt::runtime

int trainrt::run(int argc, const char* const argv[], std::function<void(Session&)> train,
                 const char* name) {
    workloads::Workload workload;
    workload.name = name != nullptr ? name : "embedded";
    workload.description = "embedded training function";
    workload.any_train_key = true;
    workload.run = std::move(train);
    return runtime::run_main(argc, argv, &workload);
}
