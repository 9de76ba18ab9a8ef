#include "runtime/stop_coordinator.hpp"

#include <iostream>

#include <fmt/format.h>

#include "runtime/stop_signals.hpp"
#include "log/log.hpp"

namespace trainrt::runtime {
namespace {

// Re-asking Slurm (an admin may have extended the limit) at most this often.
constexpr double requery_interval_s = 30.0;

void say(const std::string& line) { log::info("{}", line); }

}  // namespace

std::string reason_name(StopReason reason) {
    switch (reason) {
        case StopReason::signal: return "signal";
        case StopReason::time_limit: return "time_limit";
        case StopReason::none: break;
    }
    return "none";
}

StopCoordinator::StopCoordinator(Communicator& comm, const Context& context,
                                 std::optional<double> margin_s)
    : comm_(comm), context_(context), policy_(margin_s) {}

void StopCoordinator::watch_time_limit() {
    if (context_.world_rank != 0 || context_.job_id.empty()) return;
    slurm_ = launch::make_slurm_client(launch::SlurmPrograms::for_ranks());
    std::string why;
    const double now = monotonic_seconds();
    last_query_ = now;
    auto left = slurm_->time_left(context_.job_id, &why);
    if (!left) {
        say(fmt::format("time limit: none known for job {} ({}); stopping on signals only",
                        context_.job_id, why));
        return;
    }
    policy_.set_deadline(now + *left);
    say(fmt::format("time limit: job {} has {:.0f} s left; trainrt stops by itself when less than "
                    "the {} remains", context_.job_id, *left, policy_.describe_margin()));
}

bool StopCoordinator::time_limit_reached(double now) {
    if (context_.world_rank != 0 || !policy_.should_stop(now)) return false;
    if (now - last_query_ >= requery_interval_s) {  // the limit may have been extended
        last_query_ = now;
        if (auto left = slurm_->time_left(context_.job_id, nullptr)) policy_.set_deadline(now + *left);
        if (!policy_.should_stop(now)) return false;
    }
    say(fmt::format("stopping for the time limit: {:.1f} s left, {}", *policy_.deadline() - now,
                    policy_.describe_margin()));
    return true;
}

bool StopCoordinator::agree() {
    if (agreed()) return true;
    std::array<std::int64_t, 3> votes = vote();
    comm_.allreduce(std::span<std::int64_t>(votes), ReduceOp::max);
    return decide(votes);
}

// {signal number, time limit reached (rank 0), rank that got the signal}; zeros once agreed.
std::array<std::int64_t, 3> StopCoordinator::vote() {
    if (agreed()) return {0, 0, -1};
    const double now = monotonic_seconds();
    if (boundaries_ > 0) policy_.record_step(now - last_boundary_);
    last_boundary_ = now;
    ++boundaries_;
    const int signal = stop_signal_received();
    return {signal, time_limit_reached(now) ? 1 : 0, signal != 0 ? context_.world_rank : -1};
}

bool StopCoordinator::decide(const std::array<std::int64_t, 3>& maxed) {
    if (agreed()) return true;
    if (maxed[0] == 0 && maxed[1] == 0) return false;
    const int signal = stop_signal_received();
    request_.reason = maxed[0] != 0 ? StopReason::signal : StopReason::time_limit;
    request_.signal = static_cast<int>(maxed[0]);
    request_.signal_rank = static_cast<int>(maxed[2]);
    request_.agreed_at = last_boundary_;
    request_.requested_at = signal != 0 && stop_signal_time() > 0 ? stop_signal_time() : last_boundary_;
    request_.boundary = boundaries_;
    log_agreement();
    return true;
}

void StopCoordinator::log_agreement() const {
    if (context_.world_rank != 0) return;
    if (request_.reason == StopReason::signal)
        say(fmt::format("stop requested by SIG{} (the highest rank that received it: {}); all "
                        "ranks stop at step boundary {}", signal_name(request_.signal), request_.signal_rank,
                        request_.boundary));
    else
        say(fmt::format("all ranks stop for the time limit at step boundary {}", request_.boundary));
}

}  // namespace trainrt::runtime
