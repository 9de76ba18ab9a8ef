#include "runtime/lifecycle.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "launch/slurm_commands.hpp"
#include "runtime/stop_signals.hpp"
#include "runlog/events.hpp"
#include "runlog/heartbeats.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::runtime {
namespace {

void say(const std::string& line) { std::cout << "[trainrt] " << line << std::endl; }

// The run's history; records the tolerant reader skipped are named on stderr.
runlog::History history_of(const std::string& run_dir) {
    runlog::EventLog log = runlog::read_events(run_dir);
    for (const std::string& warning : log.warnings) storage::write_stderr_line("trainrt: warning: " + warning);
    return runlog::fold(std::move(log.events));
}

bool budget_exhausted(const runlog::History& history, const config::LifecycleSettings& settings) {
    return settings.max_failures >= 0 && history.failures > settings.max_failures;
}

// Writes the final failure record (it starts a new count) and returns its message.
std::string record_give_up(const std::string& run_dir, const Context& context, const runlog::History& history,
                           const config::LifecycleSettings& settings) {
    const std::string message = fmt::format(
        "giving up: {} failure(s), more than [failure] max_failures = {}; last: {}. Fix the cause, then "
        "resubmit (the run resumes from its latest checkpoint)", history.failures, settings.max_failures,
        history.last_end);
    runlog::append(run_dir, context,
                   runlog::FailureEvent{std::nullopt, message, "max_failures", std::nullopt, "", true, history.failures});
    return message;
}

bool started_since(const runlog::History& history, std::time_t since) {
    for (const runlog::Attempt& attempt : history.attempts)
        if (attempt.begin && *attempt.begin >= static_cast<double>(since)) return true;
    return false;
}

struct RequeueOutcome {
    int exit_code = exit_codes::stopped;
    std::string by;  // "trainrt", "slurm" or "" when not requeued
};

RequeueOutcome requeue_running_job(const Context& context) {
    launch::SlurmJobState job = launch::query_job_state(context.job_id);
    if (job.state.empty() && !launch::run_program({launch::scontrol_program(), "--version"}, 10).started) {
        say(fmt::format("cannot requeue job {}: '{}' not found (set TRAINRT_SCONTROL or PATH); "
                        "exiting {} so the sbatch template (or RequeueExit={}) requeues it",
                        context.job_id, launch::scontrol_program(), exit_codes::requeue_needed,
                        exit_codes::requeue_needed));
        return {exit_codes::requeue_needed, ""};
    }
    if (!job.state.empty() && job.state != "RUNNING") {
        if (job.restarts > context.restart_count) {
            say(fmt::format("job {} is already being requeued by Slurm", context.job_id));
            return {exit_codes::stopped, "slurm"};
        }
        say(fmt::format("job {} is ending (state {}: cancelled, or preempted without requeue): not "
                        "requeued; resubmit it to resume", context.job_id, job.state));
        return {exit_codes::stopped, ""};
    }
    launch::ProgramResult result = launch::requeue_job(context.job_id);
    if (!result.started) return {exit_codes::requeue_needed, ""};
    if (result.exit_code != 0 && job.state.empty()) {  // the controller did not answer either time
        say(fmt::format("scontrol requeue {} failed ({}); slurmctld unreachable? exiting {} so the "
                        "wrapper tries again", context.job_id, result.output, exit_codes::requeue_needed));
        return {exit_codes::requeue_needed, ""};
    }
    if (result.exit_code != 0) {
        say(fmt::format("scontrol requeue {} failed: {}; resubmit the job to resume",
                        context.job_id, result.output));
        return {exit_codes::stopped, ""};
    }
    say(fmt::format("requeued job {}: it resumes from the checkpoint when Slurm starts it again",
                    context.job_id));
    return {exit_codes::stopped, "trainrt"};
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

runlog::History begin_attempt(const std::string& run_dir, const Context& context,
                              const config::LifecycleSettings& settings) {
    runlog::History history = history_of(run_dir);
    if (history.open) {
        const std::string message = fmt::format(
            "the previous attempt{} ended without a record: node failure, SIGKILL or time limit",
            history.last_attempt_job.empty() ? std::string()
                                             : fmt::format(" (job {}, restart {})", history.last_attempt_job,
                                                           history.last_attempt_restart));
        runlog::append(run_dir, context,
                       runlog::FailureEvent{std::nullopt, message, "unrecorded_end", std::nullopt, "", false, std::nullopt});
        history = history_of(run_dir);
    }
    if (budget_exhausted(history, settings))
        throw FailureLimitError("failure: " + record_give_up(run_dir, context, history, settings));
    return history;
}

int end_stopped(const Context& context, const config::LifecycleSettings& settings,
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
    RequeueOutcome outcome = requeue_after_stop(context, settings);
    if (!outcome.by.empty())
        runlog::append(context.run_dir, context,
                       runlog::RequeueEvent{outcome.by, stop.iteration, reason_name(stop.request.reason)});
    return outcome.exit_code;
}

namespace {

// What after-step records describes the step that ended: when it started, its start record's
// world size (the wrapper's environment holds the allocation's task count, or none after a
// relaunch on fewer nodes unset it).
Context step_context(const runlog::History& history, bool started, Context context) {
    if (!started || history.attempts.empty()) return context;
    const runlog::Event& start = history.event(history.attempts.back().start);
    if (start.world_size) context.world_size = *start.world_size;
    return context;
}

// The failed step's nodes whose last heartbeat is older than the newest one by more than half the
// peer timeout: the survivors beat until they ended the step, a dead node stopped a peer timeout
// before that. Half leaves room for the beat interval on both sides.
std::vector<std::string> silent_step_hosts(const runlog::History& history, const std::string& run_dir,
                                           const config::LifecycleSettings& settings) {
    if (settings.peer_timeout_s <= 0 || history.attempts.empty()) return {};
    const runlog::Event& event = history.event(history.attempts.back().start);
    const auto* start = event.as<runlog::StartEvent>();
    if (start == nullptr || !event.time) return {};
    std::optional<double> newest;
    for (const std::string& host : start->hosts)
        if (auto beat = runlog::read_heartbeat(run_dir, host); beat && *beat >= *event.time)
            newest = std::max(newest.value_or(*beat), *beat);
    if (!newest) return {};
    const double limit = std::max(settings.peer_timeout_s / 2, 2 * runlog::heartbeat_interval(settings.peer_timeout_s));
    std::vector<std::string> silent;
    for (const auto& host : runlog::silent_hosts(run_dir, start->hosts, *event.time, *newest, limit))
        silent.push_back(host.host);
    return silent;
}

std::vector<std::string> merged(std::vector<std::string> nodes, const std::vector<std::string>& more) {
    for (const std::string& node : more)
        if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
    return nodes;
}

}  // namespace

namespace {

// The verdicts that need no failure record: the step finished, stopped, or cannot be helped.
std::optional<StepDecision> ended_step(int exit_code, bool started, const runlog::History& history) {
    if (exit_code == exit_codes::stopped) return StepDecision{StepVerdict::done, "step stopped on request; checkpoint committed", exit_codes::stopped};
    if (exit_code == exit_codes::requeue_needed) return StepDecision{StepVerdict::requeue, "step stopped; the job needs a requeue", exit_code};
    if (exit_code == 0 && started && !history.open) return StepDecision{StepVerdict::done, "training finished", 0};
    if (exit_code == exit_codes::config || exit_code == exit_codes::data || exit_code == exit_codes::failure_limit)
        return StepDecision{StepVerdict::give_up, fmt::format("step failed with exit code {} (bad input or failure "
                                                              "limit): relaunching cannot help", exit_code), exit_code};
    return std::nullopt;
}

// The failure record of a step that ended without one of its own; returns the new history.
runlog::History record_failed_step(const std::string& run_dir, const Context& context, int exit_code, bool started) {
    const std::string message = fmt::format(
        "step ended with exit code {} {}", exit_code,
        started ? "without a record: a rank was killed (SIGKILL, OOM, node failure)" : "before trainrt started");
    runlog::append(run_dir, context,
                   runlog::FailureEvent{std::nullopt, message, started ? "unrecorded_end" : "launch", exit_code,
                                        started ? "run" : "launch", false, std::nullopt});
    return history_of(run_dir);
}

std::string record_launch_give_up(const std::string& run_dir, const Context& context, const runlog::History& history,
                                  const config::LifecycleSettings& settings) {
    const std::string message = fmt::format(
        "giving up: {} step launches in a row failed before trainrt started, more than [failure] "
        "max_launch_failures = {}; last: {}. Check the job's output for srun's error", history.launch_failures,
        settings.max_launch_failures, history.last_end);
    runlog::append(run_dir, context,
                   runlog::FailureEvent{std::nullopt, message, "max_launch_failures", std::nullopt, "launch", true,
                                        history.launch_failures});
    return message;
}

}  // namespace

double launch_backoff_s(int launch_failures) {
    return std::min(60.0, std::ldexp(1.0, std::clamp(launch_failures, 1, 6)));
}

StepDecision after_step(const std::string& run_dir, const Context& wrapper,
                        const config::LifecycleSettings& settings, int exit_code,
                        std::time_t step_started, const std::vector<std::string>& excluded_nodes,
                        bool ending, int allocation_nodes, const std::string& took_over_from) {
    runlog::History history = history_of(run_dir);
    const bool started = started_since(history, step_started);
    const Context context = step_context(history, started, wrapper);
    if (auto ended = ended_step(exit_code, started, history)) return *ended;
    if (!started || history.open) history = record_failed_step(run_dir, context, exit_code, started);
    if (!started && history.launch_failures > settings.max_launch_failures)
        return {StepVerdict::give_up, record_launch_give_up(run_dir, context, history, settings), exit_codes::failure_limit};
    if (budget_exhausted(history, settings))
        return {StepVerdict::give_up, record_give_up(run_dir, context, history, settings),
                exit_codes::failure_limit};
    if (ending)
        return {StepVerdict::done, fmt::format("the job is ending (requeue or cancel): not relaunching "
                                               "after failure {} ({})", history.failures, history.last_end),
                exit_code};
    const std::vector<std::string> exclude =
        merged(excluded_nodes, started ? silent_step_hosts(history, run_dir, settings) : std::vector<std::string>{});
    const int left = allocation_nodes - static_cast<int>(exclude.size());
    if (allocation_nodes > 0 && !exclude.empty() && left < settings.min_nodes)
        return {StepVerdict::requeue,
                fmt::format("{} of the job's {} nodes left (excluded {}), fewer than [failure] min_nodes = {}: "
                            "requeueing the job for a whole allocation", left, allocation_nodes,
                            fmt::join(exclude, ","), settings.min_nodes),
                exit_code, exclude};
    runlog::append(run_dir, context,
                   runlog::RelaunchEvent{history.failures, settings.max_failures, exit_code, exclude, history.last_end,
                                         took_over_from});
    const std::string counted =
        started ? fmt::format("failure {} of at most {}", history.failures, settings.max_failures)
                : fmt::format("launch failure {} of at most {} in a row", history.launch_failures,
                              settings.max_launch_failures);
    const double delay = started ? 1.0 : launch_backoff_s(history.launch_failures);
    return {StepVerdict::relaunch,
            fmt::format("relaunching in {:g} s after {} ({}){}", delay, counted, history.last_end,
                        exclude.empty() ? "" : fmt::format(", excluding {}", fmt::join(exclude, ","))),
            exit_code, exclude, delay};
}

}  // namespace trainrt::runtime
