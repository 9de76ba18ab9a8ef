#include "supervise/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "runlog/events.hpp"
#include "runlog/failure_budget.hpp"
#include "supervise/node_health.hpp"
#include "trainrt/error.hpp"

namespace trainrt::supervise {
namespace {

bool started_since(const runlog::History& history, double since) {
    for (const runlog::Attempt& attempt : history.attempts)
        if (attempt.begin && *attempt.begin >= std::floor(since)) return true;
    return false;
}

// The records written for the step describe it: its start record's world size (the
// supervisor's environment holds the allocation's task count, or none after a relaunch on fewer
// nodes unset it).
Context step_context(const runlog::History& history, bool started, Context context) {
    if (!started || history.attempts.empty()) return context;
    const runlog::Event& start = history.event(history.attempts.back().start);
    if (start.world_size) context.world_size = *start.world_size;
    return context;
}

// The verdicts that need no failure record: the step finished, stopped, or cannot be helped. The
// run record decides what an exit code means: mpiexec reports a rank killed by signal N as exit N
// (9 SIGKILL, 6 SIGABRT, 2 SIGINT), which the table's stopped, data and config codes share. A step
// that started and left no record of its end was killed, whatever its code; one that never started
// and exits 2, 6 or 10 was refused (bad input, an exhausted budget) before it began.
std::optional<StepDecision> ended_step(int exit_code, bool started, const runlog::History& history) {
    const bool refused = exit_code == exit_codes::config || exit_code == exit_codes::data ||
                         exit_code == exit_codes::failure_limit;
    if (!started)
        return refused ? std::optional(StepDecision{Verdict::give_up, fmt::format(
                                                        "step refused with exit code {} before it started (bad "
                                                        "input or failure limit): relaunching cannot help", exit_code),
                                                    exit_code})
                       : std::nullopt;
    if (history.open) return std::nullopt;
    if (exit_code == exit_codes::stopped)
        return StepDecision{Verdict::done, "step stopped on request; checkpoint committed", exit_codes::stopped};
    if (exit_code == exit_codes::interrupted)
        return StepDecision{Verdict::done, "step interrupted (Ctrl-C); checkpoint committed", exit_code};
    if (exit_code == exit_codes::requeue_needed)
        return StepDecision{Verdict::requeue, "step stopped; the job needs a requeue", exit_code};
    if (exit_code == 0) return StepDecision{Verdict::done, "training finished", 0};
    if (refused)
        return StepDecision{Verdict::give_up, fmt::format("step failed with exit code {} (bad input or failure "
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
    return runlog::read_history(run_dir);
}

std::string record_launch_give_up(const std::string& run_dir, const Context& context, const runlog::History& history,
                                  int max_launch_failures) {
    const std::string message = fmt::format(
        "giving up: {} step launches in a row failed before trainrt started, more than [failure] "
        "max_launch_failures = {}; last: {}. Check the job's output for srun's error", history.launch_failures,
        max_launch_failures, history.last_end);
    runlog::append(run_dir, context,
                   runlog::FailureEvent{std::nullopt, message, "max_launch_failures", std::nullopt, "launch", true,
                                        history.launch_failures});
    return message;
}

StepDecision relaunch(const std::string& run_dir, const Context& context, const FailureSettings& settings,
                      const runlog::History& history, bool started, int exit_code, const NodeSet& exclude,
                      const std::string& took_over_from) {
    runlog::append(run_dir, context,
                   runlog::RelaunchEvent{history.failures, settings.max_failures.value, exit_code, exclude.items(),
                                         history.last_end, took_over_from});
    const std::string counted =
        started ? fmt::format("failure {} of at most {}", history.failures, settings.max_failures.value)
                : fmt::format("launch failure {} of at most {} in a row", history.launch_failures,
                              settings.max_launch_failures.value);
    // A second lets the failed step's processes end on the nodes it runs on again; a relaunch
    // without the nodes that failed has nothing to wait for.
    const double delay = !started ? launch_backoff_s(history.launch_failures) : exclude.empty() ? 1.0 : 0.0;
    return {Verdict::relaunch,
            fmt::format("relaunching in {:g} s after {} ({}){}", delay, counted, history.last_end,
                        exclude.empty() ? "" : ", excluding " + exclude.str()),
            exit_code, exclude, delay};
}

}  // namespace

const char* verdict_name(Verdict verdict) {
    switch (verdict) {
        case Verdict::done: return "done";
        case Verdict::relaunch: return "relaunch";
        case Verdict::requeue: return "requeue";
        case Verdict::give_up: return "give_up";
    }
    return "give_up";
}

NodeSet silent_nodes_of_step(const std::string& run_dir, double peer_timeout_s, double step_started) {
    const runlog::History history = runlog::read_history(run_dir);
    return started_since(history, step_started) ? silent_step_hosts(history, run_dir, peer_timeout_s) : NodeSet{};
}

double launch_backoff_s(int launch_failures) {
    return std::min(60.0, std::ldexp(1.0, std::clamp(launch_failures, 1, 6)));
}

StepDecision decide_after_step(const std::string& run_dir, const Context& supervisor,
                               const FailureSettings& settings, const StepEnd& step,
                               const NodeSet& excluded, int allocation_nodes, const std::string& took_over_from) {
    runlog::History history = runlog::read_history(run_dir);
    const bool started = started_since(history, step.started);
    const Context context = step_context(history, started, supervisor);
    if (auto ended = ended_step(step.exit_code, started, history)) return *ended;
    if (!started || history.open) history = record_failed_step(run_dir, context, step.exit_code, started);
    if (!started && history.launch_failures > settings.max_launch_failures.value)
        return {Verdict::give_up, record_launch_give_up(run_dir, context, history, settings.max_launch_failures.value),
                exit_codes::failure_limit};
    if (runlog::budget_exhausted(history, settings.max_failures.value))
        return {Verdict::give_up, runlog::record_give_up(run_dir, context, history, settings.max_failures.value),
                exit_codes::failure_limit};
    if (step.ending)
        return {Verdict::done, fmt::format("the job is ending (requeue or cancel): not relaunching after failure {} "
                                           "({})", history.failures, history.last_end), step.exit_code};
    NodeSet exclude = excluded;
    if (started) exclude.add(silent_step_hosts(history, run_dir, settings.peer_timeout.value));
    const int left = allocation_nodes - static_cast<int>(exclude.size());
    if (allocation_nodes > 0 && !exclude.empty() && left < settings.min_nodes.value)
        return {Verdict::requeue,
                fmt::format("{} of the job's {} nodes left (excluded {}), fewer than [failure] min_nodes = {}: "
                            "requeueing the job for a whole allocation", left, allocation_nodes, exclude.str(),
                            settings.min_nodes.value),
                step.exit_code, exclude};
    return relaunch(run_dir, context, settings, history, started, step.exit_code, exclude, took_over_from);
}

}  // namespace trainrt::supervise
