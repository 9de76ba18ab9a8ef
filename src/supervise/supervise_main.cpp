#include "supervise/supervise_main.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "launch/launcher.hpp"
#include "runlog/clock.hpp"
#include "storage/posix.hpp"
#include "supervise/supervisor.hpp"
#include "trainrt/error.hpp"
#include "log/log.hpp"

namespace trainrt::supervise {
namespace {

constexpr const char* kUsage =
    "usage: trainrt supervise [--launcher=auto|srun|mpiexec] [LAUNCHER_OPTIONS...] -- PROGRAM [ARGS...] "
    "(e.g. trainrt supervise --mpi=pmix -- trainrt --config job.ini)";

// The watcher's own options (set by the supervisor that starts it, never by hand).
constexpr std::string_view kWatchHost = "--watch-batch-host=", kWatchNode = "--watch-batch-node=",
                           kWatchExcluded = "--watch-excluded=", kWatchOutput = "--watch-output=",
                           kWatchNodelist = "--watch-nodelist=", kWatchPerNode = "--watch-tasks-per-node=",
                           kLauncher = "--launcher=";

struct Arguments {
    std::string launcher = "auto";
    std::vector<std::string> launcher_options;
    std::vector<std::string> command;  // PROGRAM ARGS
    std::optional<WatcherRole> role;
    std::string watch_output, watch_nodelist;
    int watch_tasks_per_node = 0;
};

bool take(const std::string& arg, std::string_view prefix, std::string& value) {
    if (arg.rfind(prefix, 0) != 0) return false;
    value = arg.substr(prefix.size());
    return true;
}

void take_own(const std::string& arg, Arguments& args) {
    std::string value;
    if (take(arg, kLauncher, args.launcher)) return;
    if (take(arg, kWatchHost, value)) args.role.emplace().batch_host = value;
    else if (take(arg, kWatchNode, value) && args.role) args.role->batch_node = value;
    else if (take(arg, kWatchExcluded, value) && args.role) args.role->excluded = NodeSet::parse(value);
    else if (take(arg, kWatchOutput, args.watch_output)) return;
    else if (take(arg, kWatchNodelist, args.watch_nodelist)) return;
    else if (take(arg, kWatchPerNode, value)) args.watch_tasks_per_node = std::atoi(value.c_str());
    else args.launcher_options.push_back(arg);
}

Arguments parse(int argc, const char* const argv[]) {
    Arguments args;
    int i = 1;  // argv[0]: "supervise"
    for (; i < argc && std::string(argv[i]) != "--"; ++i) take_own(argv[i], args);
    for (++i; i < argc; ++i) args.command.emplace_back(argv[i]);
    if (args.command.empty()) throw ConfigError(fmt::format("supervise: no program after \"--\"; {}", kUsage));
    if (args.launcher != "auto" && args.launcher != "srun" && args.launcher != "mpiexec")
        throw ConfigError(fmt::format("supervise: unknown --launcher={}; {}", args.launcher, kUsage));
    if (args.role && args.role->batch_node.empty()) args.role->batch_node = args.role->batch_host;
    return args;
}

std::atomic<int> g_signals{0};
extern "C" void note_signal(int) { g_signals.fetch_add(1); }

// TERM (requeue, cancel, time limit), USR2 (B:USR2) and INT only mark the job as ending: the
// step gets its own signals from Slurm and checkpoints; no relaunch after it. No SA_RESTART: a
// wait returns to look at the flag.
void catch_ending_signals() {
    struct sigaction action {};
    action.sa_handler = note_signal;
    sigemptyset(&action.sa_mask);
    for (int signal_number : {SIGTERM, SIGUSR2, SIGINT}) ::sigaction(signal_number, &action, nullptr);
}

// The supervisor's lines carry their time: a job's output spans days and requeues.
void say(const std::string& line) { log::info("{} ({})", line, runlog::time_now()); }

// A watcher runs in a one-task step of its own: that step's variables describe it, not the job.
void forget_watcher_step_environment() {
    for (const char* name : {"SLURM_NTASKS", "SLURM_NPROCS", "SLURM_NTASKS_PER_NODE", "SLURM_TASKS_PER_NODE",
                             "SLURM_NNODES", "SLURM_JOB_NUM_NODES", "SLURM_STEP_ID", "SLURM_STEPID",
                             "SLURM_STEP_NODELIST", "SLURM_STEP_NUM_NODES", "SLURM_STEP_NUM_TASKS",
                             "SLURM_STEP_TASKS_PER_NODE", "SLURM_MPI_TYPE", "SLURM_CPU_BIND", "SLURM_CPU_BIND_LIST",
                             "SLURM_CPU_BIND_TYPE", "SLURM_CPU_BIND_VERBOSE", "SLURM_DISTRIBUTION"})
        ::unsetenv(name);
}

// The watcher writes the job's output file itself: Slurm drops a step's output once its srun
// (on the lost batch host) is gone.
void append_output_to(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
}

// The watcher step's command: this program as a watcher of this batch host, with the
// allocation's shape (its own step's variables describe one task) and the same launch.
std::vector<std::string> watcher_command(const Arguments& args, const Allocation& allocation, const NodeSet& excluded,
                                         const std::string& output) {
    std::vector<std::string> command = {launch::own_program(), "supervise",
                                        std::string(kWatchHost) + allocation.host,
                                        std::string(kWatchNode) + allocation.node_name,
                                        std::string(kWatchExcluded) + excluded.str(),
                                        std::string(kWatchNodelist) + allocation.nodelist,
                                        fmt::format("{}{}", kWatchPerNode, allocation.tasks_per_node),
                                        std::string(kLauncher) + "srun"};
    if (!output.empty()) command.push_back(std::string(kWatchOutput) + output);
    command.insert(command.end(), args.launcher_options.begin(), args.launcher_options.end());
    command.emplace_back("--");
    command.insert(command.end(), args.command.begin(), args.command.end());
    return command;
}

}  // namespace

int supervise_main(int argc, const char* const argv[]) {
    Arguments args = parse(argc, argv);
    if (args.role) {
        forget_watcher_step_environment();
        if (!args.watch_output.empty()) append_output_to(args.watch_output);
    }
    catch_ending_signals();
    log::set_role(args.role ? "supervise@" + args.role->batch_node : "supervise");
    const SupervisedJob job = load_supervised_job(program_arguments(args.command));
    log::set_level(config::log_level_of(job.log.level.value));
    auto slurm = launch::make_slurm_client();
    Allocation allocation = read_allocation(launch::process_env(), *slurm);
    if (args.role) {
        allocation.nodelist = args.watch_nodelist;
        allocation.nodes = slurm->hostnames(allocation.nodelist);
        allocation.tasks_per_node = std::max(1, args.watch_tasks_per_node);
    }
    const bool use_srun = args.launcher == "srun" || (args.launcher == "auto" && !allocation.job_id.empty());
    auto launcher = use_srun ? srun_launcher(*slurm, args.launcher_options, args.command)
                             : mpiexec_launcher(args.launcher_options, args.command);
    SupervisorDeps deps{*slurm, *launcher, system_clock(), [] { return g_signals.load() > 0; }, say,
                        [&](const std::string& node, const NodeSet& excluded) {
                            launch::StepRequest request{{"--quiet", "--overlap", "-N", "1", "-n", "1", "-w", node,
                                                         "--mpi=none", "--kill-on-bad-exit=0"},
                                                        watcher_command(args, allocation, excluded,
                                                                        slurm->job_state(allocation.job_id).output_path),
                                                        launch::allocation_task_counts(), ""};
                            return slurm->start_step(request);
                        }};
    if (!use_srun) deps.start_watcher = nullptr;
    Supervisor supervisor(std::move(deps), allocation, job, args.role);
    return supervisor.run();
}

}  // namespace trainrt::supervise
