#pragma once
// A sweep's trial scheduler (tune.scheduler): how far each step of a trial runs, what the trial's
// reports decide while it runs, and what a step that ended means for the trial. The sweep
// (sweep_runner.cpp) starts, reaps, watches nodes and requeues; it asks the scheduler at these
// points of a trial's life and records what the scheduler changed in the trial (its target,
// decisions, values, status) in sweep.json.
//   fifo: every trial runs the base job to its end (fifo_scheduler.cpp);
//   asha: successive halving, decided at each rung as the trial's step waits there (asha.hpp,
//         rung_scheduler.cpp);
//   pbt:  population based training, a step per boundary, exploit/explore between them (pbt.hpp,
//         pbt_scheduler.cpp); pb2 the same with a Gaussian-process bandit's explore (pb2.hpp);
//   hyperband: synchronous brackets, a step per milestone, each trial waiting at it for the rest
//         of its bracket (hyperband.hpp, hyperband_scheduler.cpp);
//   median_stopping: the median stopping rule at every report from its grace period
//         (median_stopping.hpp), decided as ASHA's rungs are (rung_scheduler.cpp).
// A scheduler holds the SweepConfig it was made for; the sweep must outlive it.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runlog/sweep_record.hpp"
#include "tune/sweep_config.hpp"
#include "tune/trial_exit.hpp"

namespace trainrt::tune {

// What a scheduler reads and changes while the sweep runs: the sweep's own, lent for each call.
struct SchedulerContext {
    const std::string& dir;       // SWEEP_DIR: a trial's run directory is dir + "/" + trial.name
    runlog::SweepState& state;    // every trial: a decision compares the trial with the others
    std::function<void()> save;   // writes `state` to sweep.json now (before a verdict is written)
};

class Scheduler {
public:
    virtual ~Scheduler() = default;

    // Adds the scheduler's part of the sweep's stored definition (runlog::SweepState::definition):
    // what a restarted sweep must share with the stored one for the decisions to stand.
    virtual void add_definition(std::map<std::string, std::string>& definition) const = 0;

    // Trial `index`'s first TrialRecord::target (ASHA: the first rung; PBT: the first boundary;
    // HyperBand: its bracket's first milestone; FIFO: 0, the base job's own train.epochs).
    virtual std::int64_t first_target(std::size_t index) const = 0;

    // The command-line arguments ("--section.key=VALUE") the scheduler sets for the trial's next step.
    virtual std::vector<std::string> step_args(const runlog::TrialRecord& trial) const = 0;

    // A PENDING trial the sweep is about to start (when a slot is free): true when it needs no
    // more steps (ASHA: an earlier attempt's rows decided its last rung); the sweep then records
    // it TERMINATED. May change the trial and save the state.
    virtual bool ended_before_start(SchedulerContext& context, runlog::TrialRecord& trial);

    // A PENDING trial the sweep would start next (after ended_before_start): true while it must
    // wait for other trials (HyperBand: its bracket's milestone is not decided yet), leaving its
    // slot to them. May decide for the trials it waits with, change them and save the state.
    virtual bool waits(SchedulerContext& context, runlog::TrialRecord& trial);

    // Every loop of the sweep, for each trial whose step runs (ASHA: the rows new in its
    // result.jsonl decide its rungs, and each verdict is written where the step waits for it).
    virtual void watch_running(SchedulerContext& context, runlog::TrialRecord& trial);

    // The trial's step ended as `end` (trial_exit.hpp): true when the scheduler set the trial's
    // status, as it must for a step that ended done; false leaves it to the sweep's rules for a
    // stopped or failed step (PENDING again, retried, or ERROR).
    virtual bool step_ended(SchedulerContext& context, runlog::TrialRecord& trial, TrialEnd end) = 0;
};

// The scheduler tune.scheduler names, for `sweep`. ConfigError when the sweep cannot run under it
// (pbt: the base job sets no train.epochs), before the sweep writes any file.
std::unique_ptr<Scheduler> make_scheduler(const SweepConfig& sweep);

// Each scheduler, in its own file; make_scheduler picks one.
std::unique_ptr<Scheduler> make_fifo_scheduler(const SweepConfig& sweep);
std::unique_ptr<Scheduler> make_asha_scheduler(const SweepConfig& sweep);
std::unique_ptr<Scheduler> make_pbt_scheduler(const SweepConfig& sweep);
std::unique_ptr<Scheduler> make_hyperband_scheduler(const SweepConfig& sweep);
std::unique_ptr<Scheduler> make_median_scheduler(const SweepConfig& sweep);

// A trial's values as the sweep's log lines show them: "train.lr=0.01 train.batch_size=64".
std::string values_text(const runlog::TrialValues& values);

}  // namespace trainrt::tune
