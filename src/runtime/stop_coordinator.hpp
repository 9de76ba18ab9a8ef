#pragma once
// Stop agreement at step boundaries: a signal on any rank, or rank 0's time-limit policy, becomes
// a stop on every rank at the same boundary (one small allreduce per boundary, or votes carried
// in the report's own collective). Collective: every rank calls agree() (or vote() and decide())
// at the same boundaries.
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "launch/slurm_client.hpp"
#include "runtime/deadline.hpp"
#include "trainrt/comm.hpp"
#include "trainrt/context.hpp"

namespace trainrt::runtime {

enum class StopReason { none, signal, time_limit };

struct StopRequest {
    StopReason reason = StopReason::none;
    int signal = 0;          // the signal number (reason == signal)
    int signal_rank = -1;    // the highest rank that received it
    double agreed_at = 0;    // monotonic time of the agreement on this rank
    double requested_at = 0; // this rank's signal time, or agreed_at when it had none
    std::int64_t boundary = 0;  // the step boundary (count since process start) it was agreed at
};

std::string reason_name(StopReason reason);  // "signal", "time_limit"

class StopCoordinator {
public:
    StopCoordinator(Communicator& comm, const Context& context, std::optional<double> margin_s);

    // Rank 0 asks Slurm for the job's time left (no-op outside a Slurm job) and logs the policy.
    void watch_time_limit();

    // Collective: true once the ranks agreed to stop (sticky; later calls do no communication).
    bool agree();
    // agree() in two halves, for a caller that carries the votes in its own collective (a
    // report's): this rank's votes at a new boundary, then the votes maxed over the ranks.
    std::array<std::int64_t, 3> vote();
    bool decide(const std::array<std::int64_t, 3>& maxed);
    bool agreed() const { return request_.reason != StopReason::none; }
    const StopRequest& request() const { return request_; }
    std::int64_t boundaries() const { return boundaries_; }

    void record_checkpoint(double seconds) { policy_.record_checkpoint(seconds); }

private:
    bool time_limit_reached(double now);
    void log_agreement() const;

    Communicator& comm_;
    const Context& context_;
    std::unique_ptr<launch::SlurmClient> slurm_;  // rank 0 in a Slurm job only
    DeadlinePolicy policy_;
    StopRequest request_;
    std::int64_t boundaries_ = 0;
    double last_boundary_ = 0;
    double last_query_ = -1e9;
};

}  // namespace trainrt::runtime
