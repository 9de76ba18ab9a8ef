#include "runtime/stop_coordinator.hpp"

#include <cmath>
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
        case StopReason::scheduler: return "scheduler";
        case StopReason::criteria: return "criteria";
        case StopReason::none: break;
    }
    return "none";
}

StopCoordinator::StopCoordinator(Communicator& comm, const Context& context, std::optional<double> margin_s,
                                 CheckpointInterval checkpoint_interval)
    : comm_(comm), context_(context), policy_(margin_s), interval_(std::move(checkpoint_interval)) {}

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
    Votes votes = vote();
    comm_.allreduce(std::span<std::int64_t>(votes), ReduceOp::max);
    return decide(votes);
}

// {signal number, time limit reached (rank 0), rank that got the signal, checkpoint due (rank 0)};
// zeros once agreed.
StopCoordinator::Votes StopCoordinator::vote() {
    if (agreed()) return abstain();
    const double now = monotonic_seconds();
    if (boundaries_ > 0) policy_.record_step(now - last_boundary_);
    if (boundaries_ == 0 && context_.world_rank == 0) {
        interval_.start(now);
        if (!interval_.off()) log_interval();
    }
    last_boundary_ = now;
    ++boundaries_;
    const int signal = stop_signal_received();
    const bool due = context_.world_rank == 0 && interval_.due(now);
    return {signal, time_limit_reached(now) ? 1 : 0, signal != 0 ? context_.world_rank : -1, due ? 1 : 0};
}

bool StopCoordinator::decide(const Votes& maxed) {
    if (agreed()) return true;
    checkpoint_due_ = maxed[0] == 0 && maxed[1] == 0 && maxed[3] != 0;
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

void StopCoordinator::end_early(StopReason reason) {
    if (agreed()) return;
    request_.reason = reason;
    request_.agreed_at = request_.requested_at = last_boundary_;
    request_.boundary = boundaries_;
}

void StopCoordinator::record_checkpoint(double stall_s, double commit_s) {
    policy_.record_checkpoint(stall_s + commit_s);
    checkpoint_due_ = false;  // every rank records the commit: this boundary's due is served
    if (context_.world_rank != 0 || interval_.off()) return;
    interval_.record_checkpoint(monotonic_seconds(), stall_s);
    const std::optional<double> every = interval_.interval();
    if (every && (!logged_interval_ || std::abs(*every - *logged_interval_) > 0.25 * *logged_interval_)) log_interval();
}

void StopCoordinator::log_interval() {
    logged_interval_ = interval_.interval();
    say(interval_.describe());
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
