#include "runtime/after_step_main.hpp"

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/lifecycle.hpp"
#include "config/loader.hpp"
#include "launch/launcher.hpp"
#include "runtime/lifecycle.hpp"
#include "storage/posix.hpp"
#include "runlog/run_dir.hpp"
#include "trainrt/error.hpp"
#include "workloads/registry.hpp"

namespace trainrt::runtime {
namespace {

struct AfterStepArgs {
    int exit_code = -1;
    std::time_t started = 0;
    bool ending = false;
    int allocation_nodes = 0;
    std::vector<std::string> excluded;
    std::vector<const char*> run_argv;  // argv for the job's run command
};

constexpr const char* kUsage =
    "usage: trainrt after-step --exit-code N --started EPOCH [--excluded NODE,...] [--nodes N] [--ending] -- RUN-ARGS";

// The wrapper's own options come before "--"; the job's run arguments after it.
AfterStepArgs parse(int argc, const char* const argv[]) {
    namespace po = boost::program_options;
    int dashes = 1;
    while (dashes < argc && std::string(argv[dashes]) != "--") ++dashes;
    AfterStepArgs args;
    std::string excluded;
    po::options_description options("after-step");
    options.add_options()("exit-code", po::value<int>(&args.exit_code)->required(), "the step's exit code")(
        "started", po::value<std::int64_t>()->required(), "the step's start, seconds since the epoch")(
        "excluded", po::value<std::string>(&excluded), "nodes excluded from the next launch, comma-separated")(
        "ending", po::bool_switch(&args.ending), "the job is ending: do not relaunch")(
        "nodes", po::value<int>(&args.allocation_nodes), "the job's node count ([failure] min_nodes)");
    try {
        po::variables_map values;
        po::store(po::command_line_parser(dashes, argv).options(options).run(), values);  // argv[0]: "after-step"
        po::notify(values);
        args.started = static_cast<std::time_t>(values["started"].as<std::int64_t>());
    } catch (const po::error& error) {
        throw ConfigError(fmt::format("after-step: {}; {}", error.what(), kUsage));
    }
    std::stringstream nodes(excluded);
    for (std::string node; std::getline(nodes, node, ',');)
        if (!node.empty()) args.excluded.push_back(node);
    args.run_argv.push_back("trainrt");
    for (int i = dashes + 1; i < argc; ++i) args.run_argv.push_back(argv[i]);
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
    const std::string run_dir = runlog::run_dir_path(loaded.config);
    StepDecision decision =
        after_step(run_dir, wrapper_context(run_dir), config::lifecycle_settings(loaded.config),
                            args.exit_code, args.started, args.excluded, args.ending,
                   args.allocation_nodes);
    storage::write_stderr_line("trainrt after-step: " + decision.message);
    // For relaunch, two more fields: the nodes to exclude, comma-separated ("-" for none), and
    // the seconds to wait before the launch.
    std::cout << verdict_name(decision.verdict) << ' ' << decision.exit_code << ' '
              << (decision.exclude.empty() ? std::string("-") : fmt::format("{}", fmt::join(decision.exclude, ",")))
              << ' ' << decision.delay_s << std::endl;
    return 0;
}

}  // namespace trainrt::runtime
