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
#include "launch/launcher.hpp"
#include "runtime/lifecycle.hpp"
#include "runtime/wrapper_command.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::runtime {
namespace {

struct AfterStepArgs {
    int exit_code = -1;
    std::time_t started = 0;
    bool ending = false;
    int allocation_nodes = 0;
    std::string took_over_from;
    std::vector<std::string> excluded;
};

constexpr const char* kUsage =
    "usage: trainrt after-step --exit-code N --started EPOCH [--excluded NODE,...] [--nodes N] [--ending] "
    "[--took-over-from HOST] -- RUN-ARGS";

AfterStepArgs parse(const WrapperCommand& command, const char* const argv[]) {
    namespace po = boost::program_options;
    AfterStepArgs args;
    std::string excluded;
    po::options_description options("after-step");
    options.add_options()("exit-code", po::value<int>(&args.exit_code)->required(), "the step's exit code")(
        "started", po::value<std::int64_t>()->required(), "the step's start, seconds since the epoch")(
        "excluded", po::value<std::string>(&excluded), "nodes excluded from the next launch, comma-separated")(
        "ending", po::bool_switch(&args.ending), "the job is ending: do not relaunch")(
        "nodes", po::value<int>(&args.allocation_nodes), "the job's node count ([failure] min_nodes)")(
        "took-over-from", po::value<std::string>(&args.took_over_from), "the batch host whose silent wrapper this replaces");
    try {
        po::variables_map values;
        po::store(po::command_line_parser(command.own_argc, argv).options(options).run(), values);  // argv[0]: "after-step"
        po::notify(values);
        args.started = static_cast<std::time_t>(values["started"].as<std::int64_t>());
    } catch (const po::error& error) {
        throw ConfigError(fmt::format("after-step: {}; {}", error.what(), kUsage));
    }
    std::stringstream nodes(excluded);
    for (std::string node; std::getline(nodes, node, ',');)
        if (!node.empty()) args.excluded.push_back(node);
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
    const WrapperCommand command = split_wrapper_command(argc, argv);
    const AfterStepArgs args = parse(command, argv);
    const WrappedJob job = load_wrapped_job(command, embedded_name);
    StepDecision decision =
        after_step(job.run_dir, wrapper_context(job.run_dir), job.settings,
                            args.exit_code, args.started, args.excluded, args.ending,
                   args.allocation_nodes, args.took_over_from);
    storage::write_stderr_line("trainrt after-step: " + decision.message);
    // For relaunch, two more fields: the nodes to exclude, comma-separated ("-" for none), and
    // the seconds to wait before the launch.
    std::cout << verdict_name(decision.verdict) << ' ' << decision.exit_code << ' '
              << (decision.exclude.empty() ? std::string("-") : fmt::format("{}", fmt::join(decision.exclude, ",")))
              << ' ' << decision.delay_s << std::endl;
    return 0;
}

}  // namespace trainrt::runtime
