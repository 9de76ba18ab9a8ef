#include "runtime/after_step_main.hpp"

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "config/lifecycle.hpp"
#include "config/loader.hpp"
#include "launch/launcher.hpp"
#include "runtime/lifecycle.hpp"
#include "storage/posix.hpp"
#include "storage/run_dir.hpp"
#include "trainrt/error.hpp"
#include "workloads/registry.hpp"

namespace trainrt::runtime {
namespace {

struct AfterStepArgs {
    int exit_code = -1;
    std::time_t started = 0;
    bool ending = false;
    std::vector<std::string> excluded;
    std::vector<const char*> run_argv;  // argv for the job's run command
};

std::int64_t number_argument(const std::string& flag, const char* text) {
    char* end = nullptr;
    long long value = text != nullptr ? std::strtoll(text, &end, 10) : 0;
    if (text == nullptr || *text == '\0' || *end != '\0')
        throw ConfigError(fmt::format("after-step: {} needs an integer, got '{}'", flag,
                                      text != nullptr ? text : ""));
    return value;
}

AfterStepArgs parse(int argc, const char* const argv[]) {
    AfterStepArgs args;
    args.run_argv.push_back("trainrt");
    int i = 1;
    for (; i < argc && std::string(argv[i]) != "--"; ++i) {
        const std::string flag = argv[i];
        const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
        if (flag == "--exit-code") args.exit_code = static_cast<int>(number_argument(flag, value));
        else if (flag == "--started") args.started = static_cast<std::time_t>(number_argument(flag, value));
        else if (flag == "--ending") { args.ending = true; continue; }
        else if (flag == "--excluded") {
            std::stringstream nodes(value != nullptr ? value : "");
            for (std::string node; std::getline(nodes, node, ',');)
                if (!node.empty()) args.excluded.push_back(node);
        } else {
            throw ConfigError(fmt::format("after-step: unknown argument '{}'; usage: trainrt after-step "
                                          "--exit-code N --started EPOCH [--excluded NODES] [--ending] -- ARGS", flag));
        }
        ++i;
    }
    if (args.exit_code < 0 || args.started == 0)
        throw ConfigError("after-step: --exit-code and --started are required");
    for (++i; i < argc; ++i) args.run_argv.push_back(argv[i]);
    return args;
}

Context wrapper_context(const std::string& run_dir) {
    launch::LaunchInfo info;
    launch::read_slurm_job(launch::process_env(), info);
    Context context;
    context.job_id = info.job_id;
    context.restart_count = info.restart_count;
    const char* tasks = std::getenv("SLURM_NTASKS");
    context.world_size = tasks != nullptr ? std::atoi(tasks) : 0;
    context.run_dir = run_dir;
    return context;
}

const char* verdict_name(StepVerdict verdict) {
    switch (verdict) {
        case StepVerdict::done: return "done";
        case StepVerdict::relaunch: return "relaunch";
        case StepVerdict::requeue: return "requeue";
        case StepVerdict::give_up: return "give_up";
    }
    return "give_up";
}

}  // namespace

int after_step_main(int argc, const char* const argv[], const std::string& embedded_name) {
    AfterStepArgs args = parse(argc, argv);
    config::Loaded loaded = config::load(static_cast<int>(args.run_argv.size()), args.run_argv.data(),
                                         workloads::keys_by_workload(), embedded_name);
    const std::string run_dir = storage::run_dir_path(loaded.config);
    StepDecision decision =
        after_step(run_dir, wrapper_context(run_dir), config::lifecycle_settings(loaded.config),
                            args.exit_code, args.started, args.excluded, args.ending);
    storage::write_stderr_line("trainrt after-step: " + decision.message);
    std::cout << verdict_name(decision.verdict) << ' ' << decision.exit_code << std::endl;
    return 0;
}

}  // namespace trainrt::runtime
