#pragma once
// `trainrt tune`: runs a sweep's trials in index order (FIFO), up to `slots` at once, each as an
// ordinary trainrt run in SWEEP_DIR/trial_NNNN (its own config, checkpoints, metrics, events),
// started as a step of its own, as the supervisor starts its steps (supervise/step_launcher.hpp):
// `mpiexec -n R` outside Slurm, `srun --exact -n R` inside an allocation (Slurm places each step
// on CPUs no other step holds). A trial that fails is started
// again (and resumes from its checkpoint) up to tune.max_failures_per_trial times, then is ERROR;
// the sweep goes on. A trial stopped on request (USR2, TERM, time limit, Ctrl-C) stays resumable:
// the sweep starts nothing more, waits for the running trials, and requeues its job (as a run does;
// not after Ctrl-C) or, outside Slurm, exits with the stop's code: running the same command again
// continues every unfinished trial where it stopped. Trials themselves never requeue the job.
#include <cstddef>
#include <functional>
#include <string>

#include "launch/slurm_client.hpp"
#include "runlog/sweep_record.hpp"
#include "supervise/allocation.hpp"
#include "tune/sweep_config.hpp"
#include "tune/trial_nodes.hpp"

namespace trainrt::tune {

// The sweep's record (runlog/sweep_record.hpp), which this room writes.
using runlog::RungDecision;
using runlog::SweepState;
using runlog::TrialRecord;
using runlog::TrialStatus;

struct SweepPlacement {
    TrialNodes nodes;         // the nodes trials may use, and how many trials run at once
    bool use_srun = false;    // inside a Slurm allocation
    std::string job_id;       // that allocation's job (a stopped sweep requeues it), else ""
    int restart_count = 0;    // SLURM_RESTART_COUNT
    std::function<bool()> stopping = [] { return false; };  // a stop signal reached the sweep
};

// Slots: tune.max_concurrent_trials, or (0) the ranks there are (`total_ranks`: the allocation's
// tasks, or --ranks outside Slurm) divided by tune.ranks_per_trial, at least 1; fewer once a node
// of the allocation is lost (trial_nodes.hpp). `allocation`: the job's (no job id outside Slurm).
SweepPlacement place_trials(const SweepConfig& sweep, std::size_t total_ranks, const supervise::Allocation& allocation);

// SWEEP_DIR: the base job's run.storage_path / run.name, as a run's directory.
std::string sweep_dir(const SweepConfig& sweep);

// Runs the sweep to its end or to a stop; returns the exit code (docs/reference/exit-codes.md).
// Every call to Slurm goes through `slurm` (the trials' steps inside an allocation, node checks,
// the requeue); without one, Slurm's own clients.
int run_sweep(const SweepConfig& sweep, const SweepPlacement& placement, launch::SlurmClient& slurm);
int run_sweep(const SweepConfig& sweep, const SweepPlacement& placement);

}  // namespace trainrt::tune
