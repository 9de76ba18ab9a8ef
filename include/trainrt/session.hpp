#pragma once
// What a training function sees (Ray Train's train.get_context / report / get_dataset_shard).
#include <cstdint>
#include <string>

#include "trainrt/checkpoint.hpp"
#include "trainrt/comm.hpp"
#include "trainrt/config.hpp"
#include "trainrt/context.hpp"
#include "trainrt/data.hpp"
#include "trainrt/metrics.hpp"

namespace trainrt {

class Session {
public:
    virtual ~Session() = default;
    virtual const Context& context() const = 0;
    virtual const JobConfig& config() const = 0;
    virtual Communicator& communicator() = 0;

    // Collective: every rank calls it once per iteration. Rank 0 appends one JSON line to
    // <run dir>/result.jsonl (with _training_iteration, _timestamp, _time_this_iter_s) and prints
    // a progress line.
    virtual void report(const Metrics& metrics) = 0;

    // report() that also commits `state` as a checkpoint (checkpoint.hpp), atomically: when it
    // returns (or, with [checkpoint] async = true, by the next report) the checkpoint is
    // committed on every rank, or a CheckpointError was raised on every rank.
    virtual void report(const Metrics& metrics, const CheckpointState& state) = 0;

    // Collective, at a step boundary (every rank calls it at the same steps; cheap: one small
    // allreduce, none once true). True when the job should stop soon: a stop signal ([stop]
    // signals) reached any rank, or the Slurm time limit is near. Then save with
    // report(metrics, state) and return from the training function; the runtime commits the
    // checkpoint, records the stop, requeues the job and exits. report() is a step boundary too:
    // a should_stop() right after a report() returns that report's verdict without communicating,
    // so a checkpoint saved by that report is the one the run stops (and resumes) at.
    virtual bool should_stop() = 0;

    // The checkpoint to resume from (Ray's get_checkpoint()); nullptr when starting fresh.
    virtual const Checkpoint* checkpoint() const = 0;

    // This rank's whole part of `split` for `epoch` (data.hpp; an image dataset's uint8 features and
    // labels). Any other table: dataset(split) below.
    virtual DatasetShard dataset_shard(const std::string& split, std::uint64_t epoch) = 0;

    // `split` of data.path as this rank streams it (Ray's get_dataset_shard + iter_batches):
    // dataset(split).iter_batches(options, epoch) reads batches in the background (data.hpp).
    // DataError (exit 6) naming the file when it is missing, malformed or has no such split.
    virtual Dataset dataset(const std::string& split) = 0;

    // Last in the class: plugins built before it was added keep their vtable.
    // The verdict of the latest step boundary (should_stop() or report(); no communication, the
    // same on every rank): true when [checkpoint] interval says a checkpoint is due, the time
    // since the last one having passed the interval (auto: Young/Daly's, from the measured
    // checkpoint cost and [failure] mtbf). Save with report(metrics, state) at this step. Call
    // it after should_stop(); false once a stop is agreed (that checkpoint is the stop's).
    virtual bool checkpoint_due() { return false; }

    // With [checkpoint] async = true and snapshot = background, report(metrics, state) returns
    // while the state's tensors of 1 MiB or more are still being copied, beside the next step
    // (CheckFreq's pipelined snapshot): their memory must stay valid and unchanged until this
    // returns. Call it before changing them (before the optimizer's step): LibTorch's
    // prepare_model does at the end of each backward, the built-in workloads before each step.
    // Returns at once when no copy is pending. Not collective.
    virtual void await_snapshot() {}

    // Collective (every rank calls it at the same report, the same verdict on each): whether
    // report(metrics) now would be the run's last: a [stop] criterion it meets, or a sweep
    // scheduler's pause point it reaches (where the sweep may end the trial). Rank 0 decides. For
    // a checkpoint at the end (Ray's checkpoint_at_end): save with that report when true.
    virtual bool may_end_at(const Metrics& metrics) {
        (void)metrics;
        return false;
    }

    // Collective, after should_stop() returned true between two reports (mid-epoch): commits
    // `state` as the stop's checkpoint without a result row; then return from the function. Ray
    // counts reports, and so the stopped and resumed run reports the same iterations, with the
    // same values, as an uninterrupted one. The checkpoint is named for the next report, which
    // replaces it after the resume (Checkpoint::reported_iterations). WorkloadError (exit 7)
    // when no stop was agreed. A report at the stop's boundary (an epoch's end) stays a report.
    virtual void save_at_stop(const CheckpointState& state) = 0;
};

// The built-in workloads' rule at a step boundary inside an epoch (collective: it calls
// should_stop()). stop: a stop was agreed; save it with save_at_stop(state) and return. save:
// a checkpoint now: at a stop, and a report with one every `every_steps` steps (0: never) and
// when checkpoint_due(), but not at the epoch's last step (`epoch_ends`: the epoch's own
// checkpoint follows).
struct StepBoundary {
    bool stop = false;
    bool save = false;
};
StepBoundary at_step_boundary(Session& session, std::int64_t step, std::int64_t every_steps, bool epoch_ends);

}  // namespace trainrt
