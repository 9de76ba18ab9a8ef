// trainrt tune --config sweep.ini [--ranks N] [--section.key=VALUE ...] (tune/sweep_runner.hpp).
#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/sweep_results.hpp"
#include "config/values.hpp"
#include "launch/launcher.hpp"
#include "launch/slurm_client.hpp"
#include "supervise/allocation.hpp"
#include "trainrt/error.hpp"
#include "tune/sweep_runner.hpp"

namespace trainrt::cli {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int signal) { g_stop_signal = signal; }

// The sweep outlives a stop request: its trials (which receive the same signal from Slurm or
// the terminal) checkpoint and exit; the sweep starts nothing more and waits for them.
void catch_stop_signals() {
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    for (int signal : {SIGUSR2, SIGTERM, SIGINT}) ::sigaction(signal, &action, nullptr);
}

void print_help() {
    std::cout << "usage: trainrt tune --config SWEEP.ini [--ranks N] [--resume-changed] [--resume-errored]\n"
                 "                    [--section.key=VALUE ...]\n"
                 "Runs the trials of a sweep (docs/guides/sweeps.md); --section.key=VALUE sets the base\n"
                 "job of every trial, --tune.key=VALUE the sweep's own keys; --ranks: ranks there are outside Slurm;\n"
                 "--resume-changed: go on with a sweep directory's trials under a changed [tune]/[space] (its\n"
                 "trials and decisions stand, trials are added or never-started ones dropped to num_samples);\n"
                 "--resume-errored: its ERROR trials go on from their own checkpoints, their failures forgotten.\n\n";
    for (const OptionSpec& spec : tune::tune_options())
        std::cout << fmt::format("  {:<28} {:<22} {}\n", spec.key,
                                 spec.default_value.empty() ? "(unset)" : "= " + spec.default_value, spec.help);
}

}  // namespace

int tune_command(int argc, const char* const argv[]) {
    std::vector<const char*> args{argv[0]};
    long ranks = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        if (word == "--help" || word == "-h") {
            print_help();
            return exit_codes::finished;
        }
        if (word == "--ranks" && i + 1 < argc) ranks = config::parse_integer("--ranks", argv[++i], "command line");
        else args.push_back(argv[i]);
    }
    const tune::SweepConfig sweep = tune::load_sweep(static_cast<int>(args.size()), args.data());
    // The allocation as the supervisor reads it (an array task's job id, the restart count).
    auto slurm = launch::make_slurm_client();
    const supervise::Allocation allocation = supervise::read_allocation(launch::process_env(), *slurm);
    const bool in_allocation = !allocation.job_id.empty();
    const long total = in_allocation && allocation.world_size > 0 ? allocation.world_size
                                                                  : (ranks > 0 ? ranks : sweep.tune.ranks_per_trial.value);
    tune::SweepPlacement placement = tune::place_trials(sweep, static_cast<std::size_t>(total), allocation);
    placement.job_id = allocation.job_id;
    placement.restart_count = allocation.restart_count;
    catch_stop_signals();
    placement.stopping = [] { return g_stop_signal != 0; };
    const int code = tune::run_sweep(sweep, placement);
    std::cout << sweep_summary(build_sweep_report(tune::sweep_dir(sweep))) << std::flush;  // as Ray's last table
    return code;
}

}  // namespace trainrt::cli
