#include "runtime/lifecycle.hpp"

#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "launch/requeue.hpp"
#include "runtime/stop_signals.hpp"
#include "runlog/events.hpp"
#include "runlog/failure_budget.hpp"
#include "trainrt/error.hpp"
#include "log/log.hpp"

namespace trainrt::runtime {
namespace {

void say(const std::string& line) { log::info("{}", line); }

launch::RequeueOutcome requeue_after_stop(const Context& context, const Settings& settings,
                                          const runlog::StopEvent& stop) {
    if (runlog::stop_exit_code(stop) == exit_codes::interrupted) {
        say("interrupted (Ctrl-C): not requeued; run the same command again to resume");
        return {exit_codes::interrupted, "", ""};
    }
    if (settings.failure.requeue.value == RequeuePolicy::never) {
        say("not requeued ([failure] requeue = never); resubmit to resume");
        return {exit_codes::stopped, "", ""};
    }
    if (context.job_id.empty()) {
        say("not a Slurm job: run the same command again to resume from the checkpoint");
        return {exit_codes::stopped, "", ""};
    }
    auto slurm = launch::make_slurm_client(launch::SlurmPrograms::for_ranks());
    launch::RequeueOutcome outcome = launch::request_requeue(*slurm, context.job_id, context.restart_count);
    say(outcome.message);
    return outcome;
}

}  // namespace

runlog::History begin_attempt(const std::string& run_dir, const Context& context,
                              const Settings& settings) {
    runlog::History history = runlog::read_history(run_dir);
    if (history.open) {
        const std::string message = fmt::format(
            "the previous attempt{} ended without a record: node failure, SIGKILL or time limit",
            history.last_attempt_job.empty() ? std::string()
                                             : fmt::format(" (job {}, restart {})", history.last_attempt_job,
                                                           history.last_attempt_restart));
        runlog::append(run_dir, context,
                       runlog::FailureEvent{std::nullopt, message, "unrecorded_end", std::nullopt, "", false, std::nullopt});
        history = runlog::read_history(run_dir);
    }
    if (runlog::budget_exhausted(history, settings.failure.max_failures.value))
        throw FailureLimitError("failure: " + runlog::record_give_up(run_dir, context, history, settings.failure.max_failures.value));
    return history;
}

int end_stopped(const Context& context, const Settings& settings,
                const StopSummary& stop) {
    const double elapsed = monotonic_seconds() - stop.request.requested_at;
    runlog::StopEvent event{reason_name(stop.request.reason), stop.iteration, std::nullopt, stop.request.boundary,
                            stop.boundaries_by_rank, elapsed, std::nullopt, std::nullopt};
    if (!stop.checkpoint.empty()) event.checkpoint = stop.checkpoint;
    if (stop.request.reason == StopReason::signal) {
        event.signal = signal_name(stop.request.signal);
        event.signal_rank = stop.request.signal_rank;
    }
    runlog::append(context.run_dir, context, event);
    say(fmt::format("stopped at iteration {} ({}); checkpoint {} committed {:.2f} s after the request",
                    stop.iteration, reason_name(stop.request.reason),
                    stop.checkpoint.empty() ? "(none new)" : stop.checkpoint, elapsed));
    const launch::RequeueOutcome outcome = requeue_after_stop(context, settings, event);
    if (!outcome.by.empty())
        runlog::append(context.run_dir, context,
                       runlog::RequeueEvent{outcome.by, stop.iteration, reason_name(stop.request.reason)});
    return outcome.exit_code;
}

}  // namespace trainrt::runtime
