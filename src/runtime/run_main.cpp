#include "runtime/run_main.hpp"

#include <algorithm>
#include <cctype>
#include <iostream>

#include <fmt/format.h>

#include "config/settings.hpp"
#include "comm/gpu.hpp"
#include "config/loader.hpp"
#include "runtime/run_job.hpp"
#include "runtime/stop_signals.hpp"
#include "storage/posix.hpp"
#include "trainrt/build_config.hpp"
#include "trainrt/error.hpp"
#include "trainrt/plugin.hpp"
#include "trainrt/run.hpp"
#include "log/log.hpp"

namespace trainrt::runtime {
namespace {

// The job's workload with its declared keys applied (a plugin's or a component's are known only
// once it is loaded), for --print-config.
JobConfig with_workload_keys(const JobConfig& config, const workloads::Workload* embedded) {
    const workloads::Workload& workload = embedded ? *embedded : workloads::find(RunSettings::read(config).workload.value);
    return workload.any_train_key ? config : config::with_train_keys(config, workload.train_keys, workload.name);
}

// --help: every key of libtrainrt and its components, and those of the workload the command line
// names when it is a plugin.
std::string help(const config::Loaded& loaded) {
    config::WorkloadKeys keys = workloads::all_workload_keys();
    const std::string named = loaded.config.get_or(RunSettings::workload_key(), "");
    if (!named.empty() && !keys.count(named)) {
        const workloads::Workload& workload = workloads::find(named);
        if (!workload.any_train_key) keys[named] = workload.train_keys;
    }
    return config::help_text(keys);
}

// --exit-codes: both tables as shell variables, TRAINRT_EXIT_STOPPED=9, TRAINRT_RESULTS_RUNNING=20.
std::string exit_codes_text() {
    std::string text;
    for (const ExitCodeName& entry : exit_code_table()) {
        std::string name = fmt::format("TRAINRT_{}_{}", entry.table, entry.name);
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
        text += fmt::format("{}={}\n", name, entry.code);
    }
    return text;
}

// --exit-codes-markdown: the documentation's tables (docs/reference/exit-codes.md), the training codes, then `trainrt results`'s own.
std::string exit_codes_markdown() {
    std::string text, table;
    for (const ExitCodeName& entry : exit_code_table()) {
        if (table != entry.table)
            text += fmt::format("{}| {} | meaning |\n|---|---|\n", table.empty() ? "" : "\n",
                                (table = entry.table) == "exit" ? "code" : "`trainrt results` exit");
        text += fmt::format("| {} | {} |\n", entry.code, entry.meaning);
    }
    return text;
}

int run_loaded(int argc, const config::Loaded& loaded, const workloads::Workload* embedded) {
    if (loaded.flags.help) {
        std::cout << help(loaded);
        return 0;
    }
    if (loaded.flags.version) {
        std::cout << version_line() << std::endl;
        return 0;
    }
    if (loaded.flags.exit_codes || loaded.flags.exit_codes_markdown) {
        std::cout << (loaded.flags.exit_codes ? exit_codes_text() : exit_codes_markdown());
        return 0;
    }
    if (loaded.flags.keys_markdown) {
        std::cout << config::keys_markdown(workloads::all_workload_keys());
        return 0;
    }
    if (loaded.flags.print_config) {
        std::cout << config::print_config(with_workload_keys(loaded.config, embedded));
        return 0;
    }
    if (loaded.flags.config_file.empty() && argc <= 1 && embedded == nullptr)  // a program is its own job
        throw ConfigError("config: no job given; run `trainrt --config FILE` (see `trainrt --help`)");
    const Settings settings = Settings::read(loaded.config);
    // Before MPI starts and the workload loads (seconds under srun): a stop signal in that window
    // would otherwise end the rank with the signal's default action, and a sweep starts trials at
    // any time (Slurm's --signal=USR2@T then killed a trial in start-up and the stop was lost).
    install_stop_signals(settings.stop.signals.value.numbers);
    install_interrupt_handler();
    log::set_level(config::log_level_of(settings.log.level.value));
    const bool wants_gpu = settings.scaling.use_gpu.value || settings.scaling.backend.value == Backend::nccl;
    if (wants_gpu && !TRAINRT_HAS_CUDA)
        throw ConfigError(fmt::format(
            "config: {}=true / {}=nccl ({}) needs a trainrt built with CUDA and NCCL; this build has neither (see "
            "`trainrt --version`); set use_gpu = false", settings.scaling.use_gpu.key, settings.scaling.backend.key,
            settings.scaling.use_gpu.source));
    return run_job(loaded.config, settings, embedded);
}

}  // namespace

std::string version_line() {
    const std::string torch = TRAINRT_HAS_TORCH ? fmt::format("libtrainrt_torch (torch {})", TRAINRT_TORCH_VERSION) : "no";
    const std::string python =
        TRAINRT_HAS_PYTHON ? fmt::format("libtrainrt_python (CPython {})", TRAINRT_PYTHON_VERSION) : "no";
    return fmt::format("trainrt {} (plugin ABI {}; MPI: MPICH, PMIx, parallel HDF5; CUDA/NCCL: {}; LibTorch: {}; "
                       "Python: {})",
                       TRAINRT_VERSION, plugin_abi_version, comm::gpu_build_info(), torch, python);
}

int guarded(const std::function<int()>& body) noexcept {
    try {
        return body();
    } catch (const ConfigError& error) {  // the same settings on every rank: one line per job
        if (log::level() <= log::Level::error) log::write_once(log::Level::error, error.what());
        return error.exit_code();
    } catch (const Error& error) {
        log::error("{}", error.what());
        return error.exit_code();
    } catch (const std::exception& error) {
        log::error("internal error: {}", error.what());
    } catch (...) {
        log::error("internal error: an exception that is not a std::exception");
    }
    return exit_codes::internal;
}

int run_main(int argc, const char* const argv[], const workloads::Workload* embedded,
             const config::ProgramSettings& program_settings) {
    return guarded([&] {
        config::Loaded loaded = config::load(argc, argv, workloads::keys_by_workload(), embedded ? embedded->name : "",
                                             program_settings);
        return run_loaded(argc, loaded, embedded);
    });
}

int run_embedded(int argc, const char* const argv[], std::function<void(Session&)> train, const char* name,
                 std::vector<OptionSpec> (*train_keys)(), const config::ProgramSettings& program_settings) {
    workloads::Workload workload;
    workload.name = name != nullptr ? name : "embedded";
    workload.description = "embedded training function";
    workload.any_train_key = train_keys == nullptr;
    if (train_keys != nullptr) workload.train_keys = train_keys();
    workload.run = std::move(train);
    return run_main(argc, argv, &workload, program_settings);
}

}  // namespace trainrt::runtime

int trainrt::run(int argc, const char* const argv[], std::function<void(Session&)> train,
                 const char* name) {
    return runtime::run_embedded(argc, argv, std::move(train), name, nullptr);
}

int trainrt::run(int argc, const char* const argv[], std::function<void(Session&)> train, const char* name,
                 std::vector<OptionSpec> (*train_keys)()) {
    return runtime::run_embedded(argc, argv, std::move(train), name, train_keys);
}
