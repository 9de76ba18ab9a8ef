#include "supervise/supervisor.hpp"

#include <fmt/format.h>

#include "launch/requeue.hpp"
#include "runlog/heartbeats.hpp"
#include "supervise/node_health.hpp"
#include "trainrt/error.hpp"

namespace trainrt::supervise {
namespace {

// A watcher step gets this long to end after SIGTERM (srun cancels it through slurmctld).
constexpr double kWatcherGraceS = 10;
// A step left behind waits for nothing useful: it gets this long after SIGTERM at the end.
constexpr double kLeftBehindGraceS = 1;
// How often a running step is looked at.
constexpr double kWatchPollS = 0.1;
// After a rank recorded a failure, srun gets this long to end the step before the supervisor
// asks whether a node of it is gone; then again every kGoneAskS while it still runs.
constexpr double kTeardownGraceS = 0.5;
constexpr double kGoneAskS = 5;

bool failure_among(const std::vector<runlog::Event>& records) {
    for (const runlog::Event& record : records)
        if (record.as<runlog::FailureEvent>() != nullptr) return true;
    return false;
}

}  // namespace

const char* phase_name(Phase phase) {
    switch (phase) {
        case Phase::await_takeover: return "await_takeover";
        case Phase::launch: return "launch";
        case Phase::watch: return "watch";
        case Phase::decide: return "decide";
        case Phase::relaunch: return "relaunch";
        case Phase::requeue: return "requeue";
        case Phase::leave: return "leave";
    }
    return "leave";
}

Supervisor::Supervisor(SupervisorDeps deps, Allocation allocation, SupervisedJob job, std::optional<WatcherRole> role)
    : deps_(std::move(deps)), allocation_(std::move(allocation)), job_(std::move(job)), role_(std::move(role)) {
    // A new allocation forgets a takeover recorded in an earlier one.
    watching_ = !role_ && allocation_.several_nodes() && !allocation_.job_id.empty() &&
                job_.failure.peer_timeout.value > 0 && deps_.start_watcher != nullptr;
    if (watching_) runlog::remove_takeover(job_.run_dir);
}

Supervisor::~Supervisor() { stop_helpers(); }

int Supervisor::run() {
    Phase phase = role_ ? Phase::await_takeover : Phase::launch;
    for (;;) {
        trace_.push_back(phase);
        switch (phase) {
            case Phase::await_takeover: phase = await_takeover(); break;
            case Phase::launch: phase = launch(); break;
            case Phase::watch: phase = watch(); break;
            case Phase::decide: phase = decide(); break;
            case Phase::relaunch: phase = relaunch(); break;
            case Phase::requeue: phase = requeue(); break;
            case Phase::leave: return leave();
        }
    }
}

Context Supervisor::context() const {
    Context context;
    context.job_id = allocation_.job_id;
    context.restart_count = allocation_.restart_count;
    context.world_size = allocation_.world_size;
    context.run_dir = job_.run_dir;
    return context;
}

Phase Supervisor::leave_with(int exit_code) {
    exit_code_ = exit_code;
    return Phase::leave;
}

// A watcher waits for the batch host to go silent; then the job is its own, without that host,
// and it decides on the step the silent supervisor was waiting for as on a failed one.
Phase Supervisor::await_takeover() {
    auto takeover = supervise::await_takeover(job_.run_dir, job_.failure.peer_timeout.value, role_->batch_host,
                                              allocation_.host, deps_.clock, deps_.ending, deps_.say);
    if (!takeover) return leave_with(0);  // stopped by the batch host's supervisor: it lives
    deps_.say(fmt::format("took over job {} from the silent batch host {}; relaunching without it",
                          allocation_.job_id, role_->batch_node));
    took_over_ = true;
    excluded_ = role_->excluded;
    excluded_.add(role_->batch_node);
    step_status_ = 1;
    step_started_ = takeover->step_started;
    return Phase::decide;
}

Phase Supervisor::launch() {
    if (defer_to_watcher()) return Phase::leave;
    if (deps_.ending()) return leave_with(step_status_);
    step_started_ = deps_.clock.now();
    if (watching_) {
        if (!beat_)
            beat_ = std::make_unique<WrapperBeat>(job_.run_dir, job_.failure.peer_timeout.value, allocation_.host, deps_.say);
        beat_->step_launched(step_started_);
        keep_watcher();
    }
    deps_.say(deps_.launcher.describe(geometry_));
    step_records_.emplace(job_.run_dir);
    gone_in_step_ = {};
    try {
        step_ = deps_.launcher.launch(geometry_);
    } catch (const LaunchError& error) {  // the launcher itself could not start: a launch failure
        deps_.say(error.what());
        step_.reset();
    }
    return Phase::watch;
}

// srun ends a step when every task has ended, and a task on a lost node never reports: srun then
// waits Slurm's KillWait (30 s by default) and more. So once a rank recorded a failure, a step
// srun has not ended within kTeardownGraceS is asked about: a node of it gone (heartbeat silent,
// Slurm daemon not answering) leaves that srun to end by itself, and the supervisor decides now.
Phase Supervisor::watch() {
    step_status_ = 127;
    std::optional<double> failed_at;
    while (step_) {
        reap_left_behind(false);
        if (int code = step_->poll(); code >= 0) {
            step_status_ = code;
            break;
        }
        if (!failed_at && failure_among(step_records_->read_new())) failed_at = deps_.clock.now();
        if (failed_at && step_lost_a_node(*failed_at)) {
            left_behind_.push_back(std::move(step_));
            step_status_ = exit_codes::comm;
            break;
        }
        deps_.clock.sleep(kWatchPollS);
    }
    step_.reset();
    // A supervisor that was hung (SIGSTOP) must not decide for the watcher's attempt.
    if (defer_to_watcher()) return Phase::leave;
    return Phase::decide;
}

// Asks once `ask_at` + kTeardownGraceS has come, and moves `ask_at` on by kGoneAskS.
bool Supervisor::step_lost_a_node(double& ask_at) {
    if (deps_.clock.now() < ask_at + kTeardownGraceS) return false;
    ask_at = deps_.clock.now() + kGoneAskS;
    std::vector<std::string> step_nodes;
    for (const std::string& node : allocation_.nodes)
        if (!excluded_.contains(node)) step_nodes.push_back(node);
    const NodeSet silent = silent_nodes_of_step(job_.run_dir, job_.failure.peer_timeout.value, step_started_);
    gone_in_step_ = nodes_gone(deps_.slurm, step_nodes, silent, kDaemonTimeoutS, deps_.say);
    if (gone_in_step_.empty()) return false;
    deps_.say(fmt::format("a rank recorded a failure and {} is gone: deciding now, without waiting for srun (it "
                          "waits Slurm's KillWait for tasks there)", gone_in_step_.str()));
    return true;
}

void Supervisor::reap_left_behind(bool stop) {
    for (auto& step : left_behind_)
        if (stop) step->stop(kLeftBehindGraceS);
    std::erase_if(left_behind_, [stop](const auto& step) { return stop || step->poll() >= 0; });
}

Phase Supervisor::decide() {
    NodeSet known = excluded_;  // left out already, gone or silent in the step: no probe
    known.add(gone_in_step_);
    known.add(silent_nodes_of_step(job_.run_dir, job_.failure.peer_timeout.value, step_started_));
    NodeSet lost = lost_nodes(deps_.slurm, allocation_, known, kProbeTimeoutS, deps_.say);
    lost.add(known);
    decision_ = decide_after_step(job_.run_dir, context(), job_.failure,
                                  {step_status_, step_started_, deps_.ending()}, lost,
                                  static_cast<int>(allocation_.nodes.size()), role_ ? role_->batch_node : "");
    deps_.say(fmt::format("step exited with status {}: {}: {}", step_status_, verdict_name(decision_.verdict),
                          decision_.message));
    switch (decision_.verdict) {
        case Verdict::relaunch: return Phase::relaunch;
        case Verdict::requeue: return Phase::requeue;
        case Verdict::done:
        case Verdict::give_up: break;
    }
    return leave_with(decision_.exit_code);
}

Phase Supervisor::relaunch() {
    excluded_.add(decision_.exclude);
    auto geometry = relaunch_geometry(allocation_, excluded_);
    if (!geometry) {
        deps_.say(fmt::format("no node of the allocation is left (excluded: {}): not relaunching", excluded_.str()));
        return leave_with(step_status_ == 0 ? exit_codes::internal : step_status_);
    }
    geometry_ = std::move(*geometry);
    deps_.clock.sleep(decision_.delay_s);
    return Phase::launch;
}

Phase Supervisor::requeue() {
    stop_helpers();
    if (allocation_.job_id.empty()) {
        deps_.say("not a Slurm job: nothing to requeue; run the same command again to resume");
        return leave_with(exit_codes::requeue_needed);
    }
    const launch::RequeueOutcome outcome =
        launch::request_requeue(deps_.slurm, allocation_.job_id, allocation_.restart_count);
    deps_.say(outcome.message);
    exit_code_ = outcome.exit_code;
    deferred_ = true;  // requeued or not, the job is Slurm's now: a watcher does not cancel it
    return Phase::leave;
}

// A watcher that took the job over also ends it: its batch script is gone, and Slurm would keep
// the job RUNNING on the nodes left (not when Slurm is already ending it, nor after exit 9:
// trainrt requeued it, or it stopped for the time limit).
int Supervisor::leave() {
    stop_helpers();
    if (took_over_ && !deferred_ && !allocation_.job_id.empty() && exit_code_ != exit_codes::stopped &&
        !deps_.ending()) {
        deps_.say(fmt::format("ending job {}, whose batch host {} is lost (exit status {})", allocation_.job_id,
                              role_->batch_node, exit_code_));
        deps_.slurm.cancel(allocation_.job_id);
    }
    return exit_code_;
}

// When a watcher took the job over while this supervisor was hung: launch and decide nothing
// more, wait for that watcher and leave with its status. A takeover record without a live
// watcher of ours (it is gone too) is dropped and this supervisor goes on.
bool Supervisor::defer_to_watcher() {
    if (!watching_) return false;
    auto taker = runlog::read_takeover(job_.run_dir);
    if (!taker) return false;
    if (!watcher_ || watcher_->poll() >= 0) {
        deps_.say(fmt::format("a takeover by {} is recorded, but no watcher of this job runs: going on here", *taker));
        runlog::remove_takeover(job_.run_dir);
        watcher_.reset();
        return false;
    }
    deps_.say(fmt::format("the watcher on {} took this job over while this batch host was silent: leaving it the job",
                          *taker));
    beat_.reset();
    exit_code_ = watcher_->wait();
    watcher_.reset();
    deferred_ = true;
    return true;
}

// A watcher step runs on the last node that is neither this one nor left out, and knows every
// node left out so far: a new exclusion (say, the watcher's own node) replaces it. A watcher on a
// node left out is lost with that node, and its srun would wait Slurm's KillWait for the task
// there: it is left behind (stopped when the job ends) rather than waited for before the relaunch.
void Supervisor::keep_watcher() {
    if (watcher_ && watcher_->poll() < 0) {
        if (watcher_excluded_ == excluded_) return;
        if (excluded_.contains(watcher_on_))
            left_behind_.push_back(std::move(watcher_));
        else
            watcher_->stop(kWatcherGraceS);
    }
    watcher_.reset();
    const std::string node = watcher_node(allocation_, excluded_);
    if (node.empty()) return;
    try {
        watcher_ = deps_.start_watcher(node, excluded_);
    } catch (const LaunchError& error) {
        deps_.say(fmt::format("no watcher for this batch host: {}", error.what()));
        return;
    }
    watcher_excluded_ = excluded_;
    watcher_on_ = node;
    deps_.say(fmt::format("watcher for this batch host ({}) on {}", allocation_.node_name, node));
}

void Supervisor::stop_helpers() {
    beat_.reset();
    reap_left_behind(true);
    if (watcher_) watcher_->stop(kWatcherGraceS);
    watcher_.reset();
}

}  // namespace trainrt::supervise
