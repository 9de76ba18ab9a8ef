#pragma once
// Agreement at step boundaries: a signal on any rank, or rank 0's time-limit policy, becomes a
// stop on every rank at the same boundary; rank 0's checkpoint clock ([checkpoint] interval)
// becomes a checkpoint due on every rank at the same boundary. One small allreduce per boundary,
// or votes carried in the report's own collective. Collective: every rank calls agree() (or
// vote() and decide()) at the same boundaries.
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "launch/slurm_client.hpp"
#include "runtime/checkpoint_interval.hpp"
#include "runtime/deadline.hpp"
#include "trainrt/comm.hpp"
#include "trainrt/context.hpp"

namespace trainrt::runtime {

// scheduler: a sweep's scheduler ended the trial at a pause point (scheduler_pause.hpp);
// criteria: a [stop] criterion was met (stop_criteria.hpp). Those two end the run as finished.
enum class StopReason { none, signal, time_limit, scheduler, criteria };
inline bool ends_as_finished(StopReason reason) { return reason == StopReason::scheduler || reason == StopReason::criteria; }

struct StopRequest {
    StopReason reason = StopReason::none;
    int signal = 0;          // the signal number (reason == signal)
    int signal_rank = -1;    // the highest rank that received it
    double agreed_at = 0;    // monotonic time of the agreement on this rank
    double requested_at = 0; // this rank's signal time, or agreed_at when it had none
    std::int64_t boundary = 0;  // the step boundary (count since process start) it was agreed at
};

std::string reason_name(StopReason reason);  // "signal", "time_limit", "scheduler", "criteria"

class StopCoordinator {
public:
    StopCoordinator(Communicator& comm, const Context& context, std::optional<double> margin_s,
                    CheckpointInterval checkpoint_interval);

    // Rank 0: the stalls of the run's earlier checkpoints (its record's), oldest first, so auto
    // knows its interval from the first step of a resumed run. Before watch_time_limit().
    void recall_checkpoint_costs(const std::vector<double>& stalls_s) { interval_.recall_costs(stalls_s); }
    void recall_mtbf(Mtbf mtbf) { interval_.recall_mtbf(std::move(mtbf)); }

    // Rank 0 asks Slurm for the job's time left (no-op outside a Slurm job) and logs the policy.
    void watch_time_limit();

    // Collective: true once the ranks agreed to stop (sticky; later calls do no communication).
    bool agree();
    // agree() in two halves, for a caller that carries the votes in its own collective (a
    // report's): this rank's votes at a new boundary, then the votes maxed over the ranks.
    using Votes = std::array<std::int64_t, 4>;
    Votes vote();
    // The votes of a rank at a boundary already agreed (a caller's collective that is no boundary).
    static Votes abstain() { return {0, 0, -1, 0}; }
    bool decide(const Votes& maxed);
    // Every rank, at the same boundary: the run ends here as finished (ends_as_finished(reason)).
    void end_early(StopReason reason);
    bool agreed() const { return request_.reason != StopReason::none; }
    const StopRequest& request() const { return request_; }
    std::int64_t boundaries() const { return boundaries_; }

    // The latest boundary's verdict: a time-based checkpoint is due there (never once a stop is
    // agreed: the stop's own checkpoint is taken).
    bool checkpoint_due() const { return checkpoint_due_; }

    // A checkpoint committed: `stall_s` the training paused for it, `commit_s` until committed.
    void record_checkpoint(double stall_s, double commit_s);

private:
    bool time_limit_reached(double now);
    void log_agreement() const;
    void log_interval();

    Communicator& comm_;
    const Context& context_;
    std::unique_ptr<launch::SlurmClient> slurm_;  // rank 0 in a Slurm job only
    DeadlinePolicy policy_;
    CheckpointInterval interval_;
    std::optional<double> logged_interval_;  // rank 0 logs the interval again when it moves by 25%
    bool checkpoint_due_ = false;
    StopRequest request_;
    std::int64_t boundaries_ = 0;
    double last_boundary_ = 0;
    double last_query_ = -1e9;
};

}  // namespace trainrt::runtime
