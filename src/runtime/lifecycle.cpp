#include "runtime/lifecycle.hpp"

#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "launch/slurm_commands.hpp"
#include "runtime/stop_signals.hpp"
#include "storage/run_dir.hpp"
#include "trainrt/error.hpp"

namespace trainrt::runtime {
namespace {

void say(const std::string& line) { std::cout << "[trainrt] " << line << std::endl; }

bool budget_exhausted(const AttemptHistory& history, const config::LifecycleSettings& settings) {
    return settings.max_failures >= 0 && history.failures > settings.max_failures;
}

// Writes the final failure record (it starts a new count) and returns its message.
std::string record_give_up(const std::string& run_dir, const Context& context, const AttemptHistory& history,
                           const config::LifecycleSettings& settings) {
    const std::string message = fmt::format(
        "giving up: {} failure(s), more than [failure] max_failures = {}; last: {}. Fix the cause, then "
        "resubmit (the run resumes from its latest checkpoint)", history.failures, settings.max_failures,
        history.last_end);
    storage::append_event(run_dir, "failure", context,
                          {{"final", true}, {"reason", "max_failures"}, {"message", message},
                           {"failures", history.failures}});
    return message;
}

// Seconds since the epoch of an event's "time" (UTC, as iso_time_now writes it); 0 if absent.
double event_time(const nlohmann::json& event) {
    std::tm utc{};
    const std::string text = event.value("time", "");
    const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &utc);
    if (rest == nullptr) return 0;
    double fraction = *rest == '.' ? std::atof(rest) : 0.0;
    return static_cast<double>(timegm(&utc)) + fraction;
}

bool started_since(const std::vector<nlohmann::json>& events, std::time_t since) {
    for (const nlohmann::json& event : events)
        if (event.value("event", "") == "start" && event_time(event) >= static_cast<double>(since))
            return true;
    return false;
}

struct RequeueOutcome {
    int exit_code = exit_stopped;
    std::string by;  // "trainrt", "slurm" or "" when not requeued
};

RequeueOutcome requeue_running_job(const Context& context) {
    launch::SlurmJobState job = launch::query_job_state(context.job_id);
    if (job.state.empty() && !launch::run_program({launch::scontrol_program(), "--version"}, 10).started) {
        say(fmt::format("cannot requeue job {}: '{}' not found (set TRAINRT_SCONTROL or PATH); "
                        "exiting {} so the sbatch template (or RequeueExit={}) requeues it",
                        context.job_id, launch::scontrol_program(), exit_requeue_needed,
                        exit_requeue_needed));
        return {exit_requeue_needed, ""};
    }
    if (!job.state.empty() && job.state != "RUNNING") {
        if (job.restarts > context.restart_count) {
            say(fmt::format("job {} is already being requeued by Slurm", context.job_id));
            return {exit_stopped, "slurm"};
        }
        say(fmt::format("job {} is ending (state {}: cancelled, or preempted without requeue): not "
                        "requeued; resubmit it to resume", context.job_id, job.state));
        return {exit_stopped, ""};
    }
    launch::ProgramResult result = launch::requeue_job(context.job_id);
    if (!result.started) return {exit_requeue_needed, ""};
    if (result.exit_code != 0 && job.state.empty()) {  // the controller did not answer either time
        say(fmt::format("scontrol requeue {} failed ({}); slurmctld unreachable? exiting {} so the "
                        "wrapper tries again", context.job_id, result.output, exit_requeue_needed));
        return {exit_requeue_needed, ""};
    }
    if (result.exit_code != 0) {
        say(fmt::format("scontrol requeue {} failed: {}; resubmit the job to resume",
                        context.job_id, result.output));
        return {exit_stopped, ""};
    }
    say(fmt::format("requeued job {}: it resumes from the checkpoint when Slurm starts it again",
                    context.job_id));
    return {exit_stopped, "trainrt"};
}

RequeueOutcome requeue_after_stop(const Context& context, const config::LifecycleSettings& settings) {
    if (!settings.requeue) {
        say("not requeued ([failure] requeue = never); resubmit to resume");
        return {};
    }
    if (context.job_id.empty()) {
        say("not a Slurm job: run the same command again to resume from the checkpoint");
        return {};
    }
    return requeue_running_job(context);
}

}  // namespace

AttemptHistory begin_attempt(const std::string& run_dir, const Context& context,
                             const config::LifecycleSettings& settings) {
    AttemptHistory history = summarize(read_events(run_dir));
    if (history.open) {
        storage::append_event(run_dir, "failure", context,
                              {{"reason", "unrecorded_end"},
                               {"message", fmt::format("the previous attempt{} ended without a record: "
                                                       "node failure, SIGKILL or time limit",
                                                       history.last_attempt_job.empty() ? std::string() :
                                                       fmt::format(" (job {}, restart {})", history.last_attempt_job,
                                                                   history.last_attempt_restart))}});
        history = summarize(read_events(run_dir));
    }
    if (budget_exhausted(history, settings))
        throw FailureLimitError("failure: " + record_give_up(run_dir, context, history, settings));
    return history;
}

int end_stopped(const Context& context, const config::LifecycleSettings& settings,
                const StopSummary& stop) {
    const double elapsed = monotonic_seconds() - stop.request.requested_at;
    nlohmann::json fields = {{"reason", reason_name(stop.request.reason)},
                             {"step", stop.iteration},
                             {"checkpoint", stop.checkpoint.empty() ? nlohmann::json() : nlohmann::json(stop.checkpoint)},
                             {"boundary", stop.request.boundary},
                             {"boundaries_by_rank", stop.boundaries_by_rank},
                             {"request_to_commit_s", elapsed}};
    if (stop.request.reason == StopReason::signal) {
        fields["signal"] = signal_name(stop.request.signal);
        fields["signal_rank"] = stop.request.signal_rank;
    }
    storage::append_event(context.run_dir, "stop", context, fields);
    say(fmt::format("stopped at iteration {} ({}); checkpoint {} committed {:.2f} s after the request",
                    stop.iteration, reason_name(stop.request.reason),
                    stop.checkpoint.empty() ? "(none new)" : stop.checkpoint, elapsed));
    RequeueOutcome outcome = requeue_after_stop(context, settings);
    if (!outcome.by.empty())
        storage::append_event(context.run_dir, "requeue", context,
                              {{"by", outcome.by}, {"step", stop.iteration},
                               {"reason", reason_name(stop.request.reason)}});
    return outcome.exit_code;
}

StepDecision after_step(const std::string& run_dir, const Context& context,
                        const config::LifecycleSettings& settings, int exit_code,
                        std::time_t step_started, const std::vector<std::string>& excluded_nodes,
                        bool ending) {
    std::vector<nlohmann::json> events = read_events(run_dir);
    AttemptHistory history = summarize(events);
    const bool started = started_since(events, step_started);
    if (exit_code == exit_stopped) return {StepVerdict::done, "step stopped on request; checkpoint committed", exit_stopped};
    if (exit_code == exit_requeue_needed) return {StepVerdict::requeue, "step stopped; the job needs a requeue", exit_code};
    if (exit_code == 0 && started && !history.open) return {StepVerdict::done, "training finished", 0};
    if (exit_code == 2 || exit_code == 6 || exit_code == 10)
        return {StepVerdict::give_up, fmt::format("step failed with exit code {} (bad input or failure "
                                                  "limit): relaunching cannot help", exit_code), exit_code};
    if (!started || history.open) {
        storage::append_event(run_dir, "failure", context,
                              {{"reason", started ? "unrecorded_end" : "launch"},
                               {"phase", started ? "run" : "launch"}, {"exit_code", exit_code},
                               {"message", fmt::format("step ended with exit code {} {}", exit_code,
                                                       started ? "without a record: a rank was killed "
                                                                 "(SIGKILL, OOM, node failure)"
                                                               : "before trainrt started")}});
        history = summarize(read_events(run_dir));
    }
    if (budget_exhausted(history, settings))
        return {StepVerdict::give_up, record_give_up(run_dir, context, history, settings),
                FailureLimitError("").exit_code()};
    if (ending)
        return {StepVerdict::done, fmt::format("the job is ending (requeue or cancel): not relaunching "
                                               "after failure {} ({})", history.failures, history.last_end),
                exit_code};
    storage::append_event(run_dir, "relaunch", context,
                          {{"failures", history.failures}, {"max_failures", settings.max_failures},
                           {"exit_code", exit_code}, {"excluded_nodes", excluded_nodes},
                           {"reason", history.last_end}});
    return {StepVerdict::relaunch,
            fmt::format("relaunching after failure {} of at most {} ({}){}", history.failures,
                        settings.max_failures, history.last_end,
                        excluded_nodes.empty() ? "" : fmt::format(", excluding {}", fmt::join(excluded_nodes, ","))),
            exit_code};
}

}  // namespace trainrt::runtime
