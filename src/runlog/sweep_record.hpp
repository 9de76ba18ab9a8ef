#pragma once
// A sweep's own record, SWEEP_DIR/sweep.json, written by `trainrt tune` (tune/sweep_runner.hpp)
// and read by `trainrt results`, `trainrt plot` and the Python Tuner. Replaced atomically (write,
// fsync, rename) after every transition, so a requeued or killed sweep finds every trial where it was: a trial is
// PENDING until started, RUNNING while its step runs, TERMINATED when it ended 0, ERROR after
// tune.max_failures_per_trial + 1 failed attempts (a node lost under it is not its failure). A
// trial found RUNNING after a restart runs again and resumes from its own run directory's
// checkpoint, as any run does. The sweep's definition ([tune] and [space]) is stored beside the
// trials: a restart with another one is refused.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace trainrt::runlog {

// A trial's sampled settings, in the space's order: {"train.lr", "0.003"}.
using TrialValues = std::vector<std::pair<std::string, std::string>>;

enum class TrialStatus { pending, running, terminated, error };
const char* status_name(TrialStatus status);

// A scheduler's decision at a rung, with the result it was based on.
struct RungDecision {
    std::int64_t rung = 0;     // the time_attr value reached (epochs, or reports for training_iteration)
    double value = 0;          // the trial's metric there
    double cutoff = 0;         // the rung's cutoff then (ASHA: the 1 - 1/rf quantile of its values)
    std::size_t seen = 0;      // trials that had reached the rung, this one included
    bool promoted = false;     // continues to the next rung; false: stopped early (PBT: exploited)
    std::int64_t donor = -1;   // PBT: the trial whose checkpoint and values it went on from
    TrialValues values;        // PBT: the values it reached the rung with (PB2's data)
};

struct TrialRecord {
    std::size_t index = 0;
    std::string name;      // trial_0003: its run directory under the sweep's
    TrialValues values;    // its settings from [space]
    TrialStatus status = TrialStatus::pending;
    int attempts = 0;      // steps started for it
    int failures = 0;      // its failed steps, counted against tune.max_failures_per_trial
    int node_losses = 0;   // its steps ended by a node lost under them (not counted as failures)
    int last_exit = -1;    // the last step's exit code
    // ASHA: its next rung to decide (0: none left); PBT: the boundary its next step runs to (an
    // epoch, or a report count with time_attr = training_iteration); FIFO: 0, the base job's own.
    std::int64_t target = 0;
    std::vector<RungDecision> decisions;
    std::vector<double> started_unix;  // when each attempt's step was started (seconds since the epoch)
};

struct SweepState {
    std::map<std::string, std::string> definition;  // "tune.metric" / "space.train.lr" -> value
    std::string metric;    // the metric trials are compared by ("": none), as tune.metric set it
    std::string mode = "max";  // "max": a larger metric is better; "min": a smaller one
    std::vector<TrialRecord> trials;
};

// Reads SWEEP_DIR/sweep.json; an absent file is an empty state. StorageError when unreadable.
SweepState load_state(const std::string& sweep_dir);
void save_state(const std::string& sweep_dir, const SweepState& state);

// --resume-errored (Ray's Tuner.restore(resume_errored=True)): every ERROR trial PENDING again
// with its failures forgotten, to resume from its own checkpoint; how many there were.
std::size_t reopen_errored(SweepState& state);

// Whether ASHA stopped the trial at a rung below its last (a pruned trial), from the decisions
// and the rungs the state's definition records.
bool stopped_early(const SweepState& state, const TrialRecord& trial);

// The first difference between a stored definition and this one ("tune.num_samples: 8 -> 12"),
// or "" when they are the same.
std::string definition_change(const std::map<std::string, std::string>& stored,
                              const std::map<std::string, std::string>& now);

}  // namespace trainrt::runlog
