#include "tune/sweep_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "launch/process.hpp"
#include "metrics/metric_series.hpp"
#include "runlog/clock.hpp"
#include "runlog/events.hpp"
#include "config/settings.hpp"
#include "runlog/run_dir.hpp"
#include "runlog/run_files.hpp"
#include "tune/python_search.hpp"
#include "tune/optuna_search.hpp"
#include "tune/scheduler.hpp"
#include "tune/trial_exit.hpp"
#include "tune/trial_threads.hpp"
#include "launch/requeue.hpp"
#include "launch/slurm_client.hpp"
#include "launch/step_command.hpp"
#include "log/log.hpp"
#include "supervise/step_launcher.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::tune {
namespace {

// How often running trials' heartbeats are looked at for a lost node, and how long a step ended
// for one gets before SIGKILL (srun waits for its tasks there).
constexpr double kWatchNodesS = 2;
constexpr double kStopGraceS = 2;

std::string trial_name(std::size_t index) { return fmt::format("trial_{:04d}", index); }

// The Python searcher's module and its settings (search = bayesopt, nevergrad or hyperopt; python_search.hpp).
std::pair<std::string, nlohmann::json> python_searcher(const SweepConfig& sweep) {
    if (sweep.tune.search.value == SearchKind::bohb) {
        const BohbKeys& keys = sweep.bohb;
        return {"_bohb_search", {{"min_points_in_model", keys.min_points_in_model.value},
                                 {"top_n_percent", keys.top_n_percent.value}, {"num_samples", keys.num_samples.value},
                                 {"random_fraction", keys.random_fraction.value},
                                 {"bandwidth_factor", keys.bandwidth_factor.value},
                                 {"min_bandwidth", keys.min_bandwidth.value}}};
    }
    if (sweep.tune.search.value == SearchKind::hyperopt)
        return {"_hyperopt_search", {{"n_initial_points", sweep.hyperopt.n_initial_points.value},
                                     {"gamma", sweep.hyperopt.gamma.value}, {"space", sweep.hyperopt.space.value}}};
    if (sweep.tune.search.value == SearchKind::nevergrad)
        return {"_nevergrad_search", {{"optimizer", sweep.nevergrad.optimizer.value}}};
    const BayesOptKeys& keys = sweep.bayesopt;
    return {"_bayesopt_search", {{"random_steps", keys.random_search_steps.value},
                                 {"utility", {{"kind", keys.utility.value}, {"kappa", keys.kappa.value}, {"xi", keys.xi.value}}}}};
}

// The searcher's own keys in a sweep's definition (python_search.hpp's settings, Optuna's).
void add_searcher_definition(const SweepConfig& sweep, std::map<std::string, std::string>& definition) {
    if (sweep.tune.search.value == SearchKind::optuna) {
        definition[sweep.optuna.n_startup_trials.key] = std::to_string(sweep.optuna.n_startup_trials.value);
        if (!sweep.optuna.space.value.empty()) definition[sweep.optuna.space.key] = sweep.optuna.space.value;
        if (!sweep.optuna.objectives.value.empty()) definition[sweep.optuna.objectives.key] = sweep.optuna.objectives.value;
    }
    if (sweep.tune.search.value == SearchKind::bayesopt) {
        const BayesOptKeys& keys = sweep.bayesopt;
        definition[keys.random_search_steps.key] = std::to_string(keys.random_search_steps.value);
        definition[keys.utility.key] = keys.utility.value;
        definition[keys.kappa.key] = real_text(keys.kappa.value), definition[keys.xi.key] = real_text(keys.xi.value);
    }
    if (sweep.tune.search.value == SearchKind::nevergrad) definition[sweep.nevergrad.optimizer.key] = sweep.nevergrad.optimizer.value;
    if (sweep.tune.search.value == SearchKind::hyperopt) {
        const HyperOptKeys& keys = sweep.hyperopt;
        definition[keys.n_initial_points.key] = std::to_string(keys.n_initial_points.value);
        definition[keys.gamma.key] = real_text(keys.gamma.value);
        if (!keys.space.value.empty()) definition[keys.space.key] = keys.space.value;
    }
    if (sweep.tune.search.value == SearchKind::bohb) {
        const nlohmann::json settings = python_searcher(sweep).second;
        for (const auto& [key, value] : settings.items()) definition["tune.bohb." + key] = value.dump();
    }
}

// What a restarted sweep must share with the stored one for its trials to be the same.
std::map<std::string, std::string> definition_of(const SweepConfig& sweep, const Scheduler& scheduler) {
    std::map<std::string, std::string> definition{
        {sweep.tune.base.key, sweep.base_path},
        {sweep.tune.metric.key, sweep.tune.metric.value},
        {sweep.tune.mode.key, name_of(sweep.tune.mode.value)},
        {sweep.tune.num_samples.key, std::to_string(sweep.trials)},
        {sweep.tune.search.key, name_of(sweep.tune.search.value)},
        {sweep.tune.scheduler.key, name_of(sweep.tune.scheduler.value)},
        {sweep.tune.ranks_per_trial.key, std::to_string(sweep.tune.ranks_per_trial.value)},
        {RunSettings::seed_key(), std::to_string(RunSettings::read(sweep.base).seed.value)}};
    scheduler.add_definition(definition);
    if (sweep.tune.repeat.value > 1) {
        definition[sweep.tune.repeat.key] = std::to_string(sweep.tune.repeat.value);
        definition[sweep.tune.repeat_set_index.key] = sweep.tune.repeat_set_index.value ? "true" : "false";
    }
    add_searcher_definition(sweep, definition);
    for (const Domain& domain : sweep.space) definition["space." + domain.key] = domain.text();
    return definition;
}

// A repeated trial's place in its group (tune.repeat_set_index), as Ray's Repeater names it.
constexpr const char* kTrialIndexKey = "train.__trial_index__";

// A trial's values as its searcher drew them (without its place in a repeated group).
TrialValues drawn_values(const TrialRecord& trial) {
    TrialValues values;
    for (const auto& value : trial.values)
        if (value.first != kTrialIndexKey) values.push_back(value);
    return values;
}

// What one trial's step runs: this program on the base job with the trial's values and what the
// scheduler sets for the step, in its own run directory.
std::vector<std::string> trial_command(const SweepConfig& sweep, const Scheduler& scheduler, const TrialRecord& trial,
                                       const std::string& dir) {
    std::vector<std::string> argv{launch::own_program(), "--config", sweep.base_path};
    argv.insert(argv.end(), sweep.overrides.begin(), sweep.overrides.end());
    for (const auto& [key, value] : trial.values) argv.push_back(fmt::format("--{}={}", key, value));
    for (std::string& arg : scheduler.step_args(trial)) argv.push_back(std::move(arg));
    // A trial's checkpoints ranked by the sweep's metric (unless the base job ranks them itself):
    // the best trial's best checkpoint is then the one where the metric was best.
    const bool ranked_by_base = !CheckpointSettings::read(sweep.base).score_attribute.value.empty();
    if (!ranked_by_base && !sweep.tune.metric.value.empty())
        argv.insert(argv.end(), {"--checkpoint.score_attribute=" + sweep.tune.metric.value,
                                 "--checkpoint.score_order=" + std::string(name_of(sweep.tune.mode.value))});
    argv.insert(argv.end(), {"--run.storage_path=" + dir, "--run.name=" + trial.name, "--failure.requeue=never",
                             "--metrics.progress=off"});
    return argv;
}

// How a trial's step in `slot` is started: as the supervisor's steps are (step_launcher.hpp), its
// launcher's options launch::step_command's (less the program, which the launcher runs; srun's
// --kill-on-bad-exit=1 is the launcher's own) and inside an allocation the slot's srun options.
std::unique_ptr<supervise::StepLauncher> trial_launcher(const SweepConfig& sweep, const SweepPlacement& placement,
                                                        std::size_t slot, std::vector<std::string> command,
                                                        launch::SpawnOptions step, launch::SlurmClient& slurm) {
    std::vector<std::string> options = launch::step_command(
        placement.use_srun ? launch::StepLauncher::srun : launch::StepLauncher::mpiexec,
        {static_cast<int>(sweep.tune.ranks_per_trial.value), true, false});
    options.erase(options.begin());
    if (!placement.use_srun)
        return supervise::mpiexec_launcher(std::move(options), std::move(command), std::move(step));
    for (std::string& option : placement.nodes.srun_options(slot)) options.push_back(std::move(option));
    return supervise::srun_launcher(slurm, std::move(options), std::move(command), std::move(step));
}

// Trial `index` as it enters the sweep: PENDING, its values drawn now (Optuna's, BayesOpt's when it starts),
// its first target the scheduler's (Scheduler::first_target).
TrialRecord new_trial(const SweepConfig& sweep, const Scheduler& scheduler, std::size_t index) {
    const std::uint64_t seed = run_seed(sweep.base);
    TrialRecord trial{index, trial_name(index), drawn_at_start(sweep.tune.search.value)
                                                    ? TrialValues{}
                                                    : native_trial(sweep.space, sweep.tune.search.value, seed, index)};
    trial.target = scheduler.first_target(index);
    return trial;
}

// --resume-changed: the recorded trials, their values and decisions stand; the new definition is
// stored; trials beyond the stored ones are added, and never-started PENDING trials beyond
// num_samples are dropped (a started one is kept: its work is not thrown away).
SweepState adopt_definition(SweepState stored, const SweepConfig& sweep, const Scheduler& scheduler,
                            const std::string& dir, const std::string& change) {
    stored.definition = definition_of(sweep, scheduler);
    const std::size_t before = stored.trials.size();
    while (stored.trials.size() > sweep.trials && stored.trials.back().status == TrialStatus::pending &&
           stored.trials.back().attempts == 0)
        stored.trials.pop_back();
    for (std::size_t i = stored.trials.size(); i < sweep.trials; ++i) stored.trials.push_back(new_trial(sweep, scheduler, i));
    log::info("sweep {}: going on with a changed definition ({}; --resume-changed): {} trials, {} before; recorded "
              "trials and decisions stand{}", dir, change, stored.trials.size(), before,
              stored.trials.size() > sweep.trials ? fmt::format(" ({} started beyond num_samples kept)", stored.trials.size() - sweep.trials) : "");
    return stored;
}

// The stored state when its definition is this sweep's, else a new one (see state_to_run).
SweepState stored_or_new_state(const SweepConfig& sweep, const Scheduler& scheduler, const std::string& dir) {
    for (const char* file : {runlog::kRunJson, runlog::kEvents, runlog::kResults})
        if (std::filesystem::exists(runlog::path_in(dir, file)))
            throw ConfigError(fmt::format("tune: {} is a run's directory (it holds {}); give the sweep a run.name of "
                                          "its own, e.g. --run.name=sweep", dir, file));
    storage::make_dirs(dir);
    SweepState stored = runlog::load_state(dir);
    const auto definition = definition_of(sweep, scheduler);
    if (!stored.trials.empty()) {
        if (sweep.resume_errored && runlog::reopen_errored(stored) > 0)
            log::info("sweep {}: its ERROR trials go on from their checkpoints (--resume-errored)", dir);
        const std::string change = runlog::definition_change(stored.definition, definition);
        if (change.empty()) return stored;
        if (sweep.resume_changed) return adopt_definition(std::move(stored), sweep, scheduler, dir, change);
        throw ConfigError(fmt::format("tune: {} holds a sweep with another definition ({}); give the new "
                                      "sweep another run.name, move the directory away, or go on with its "
                                      "trials under the new definition with --resume-changed", dir, change));
    }
    SweepState state;
    state.definition = definition;
    for (std::size_t i = 0; i < sweep.trials; ++i) state.trials.push_back(new_trial(sweep, scheduler, i));
    return state;
}

// The state to run from, under `scheduler` (the sweep's): the stored one when its definition is
// this sweep's (ConfigError naming the first difference otherwise, unless --resume-changed: then
// the stored trials under the new definition, trials added or never-started ones dropped to
// num_samples), else every trial PENDING with its values drawn now (search = optuna: drawn when
// each trial first starts, from the trials finished by then); with the sweep's metric and mode.
SweepState state_to_run(const SweepConfig& sweep, const Scheduler& scheduler, const std::string& dir) {
    SweepState state = stored_or_new_state(sweep, scheduler, dir);
    state.metric = sweep.tune.metric.value;
    state.mode = name_of(sweep.tune.mode.value);
    return state;
}

struct Running {
    std::size_t trial;
    std::unique_ptr<launch::Process> step;  // its srun or mpiexec
    std::size_t slot;
    std::vector<std::string> hosts;  // its step's, from its start record (empty until written)
    bool ended_by_sweep = false;     // the sweep stopped it (a node under it was lost)
};

// The hosts of a trial's attempt started at `since_s` (its start record's), empty before it has one.
std::vector<std::string> attempt_hosts(const std::string& run_dir, double since_s) {
    std::vector<std::string> hosts;
    try {
        for (const runlog::Event& event : runlog::read_events(run_dir).events)
            if (const auto* start = event.as<runlog::StartEvent>(); start != nullptr && event.time && *event.time >= since_s - 1)
                hosts = start->hosts;
    } catch (const Error&) {  // not written yet
    }
    return hosts;
}

class SweepRun {
public:
    SweepRun(const SweepConfig& sweep, const SweepPlacement& placement, std::unique_ptr<Scheduler> scheduler,
             launch::SlurmClient& slurm)
        : sweep_(sweep), placement_(placement), scheduler_(std::move(scheduler)), slurm_(slurm), dir_(sweep_dir(sweep)),
          state_(state_to_run(sweep, *scheduler_, dir_)), seed_(run_seed(sweep.base)),
          peer_timeout_s_(FailureSettings::read(sweep.base).peer_timeout.value),
          stop_signals_(StopSettings::read(sweep.base).signals.value.numbers),
          trial_env_(trial_environment(placement.nodes.slots() * static_cast<std::size_t>(sweep.tune.ranks_per_trial.value),
                                       std::getenv("OMP_NUM_THREADS"), placement.use_srun)),
          scheduling_{dir_, state_, [this] { runlog::save_state(dir_, state_); }} {}
    SweepRun(const SweepRun&) = delete;  // scheduling_ refers to this object's own members
    SweepRun& operator=(const SweepRun&) = delete;

    int run() {
        for (TrialRecord& trial : state_.trials)
            if (trial.status == TrialStatus::running) trial.status = TrialStatus::pending;  // resumes
        runlog::save_state(dir_, state_);
        log::info("sweep {}: {} trials of {} rank(s), {} at once", dir_, state_.trials.size(),
                  sweep_.tune.ranks_per_trial.value, placement_.nodes.slots());
        while (start_more() || !running_.empty()) {
            for (const Running& step : running_) scheduler_->watch_running(scheduling_, state_.trials[step.trial]);
            reap();
            watch_nodes();
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return summary();
    }

private:
    // Starts pending trials into free slots; false when nothing more will ever start.
    bool start_more() {
        if (placement_.stopping() && stop_code_ == 0) stop_code_ = exit_codes::stopped;
        if (stop_code_ != 0) return false;
        bool left = false;
        for (TrialRecord& trial : state_.trials) {
            if (trial.status != TrialStatus::pending) continue;
            if (scheduler_->ended_before_start(scheduling_, trial)) {  // its earlier steps' reports ended it
                trial.status = TrialStatus::terminated;
                runlog::save_state(dir_, state_);
                continue;
            }
            left = true;
            if (scheduler_->waits(scheduling_, trial)) continue;  // for other trials, which take the slots
            const std::optional<std::size_t> slot = placement_.nodes.take();
            if (!slot) break;
            if (trial.values.empty() && drawn_at_start(sweep_.tune.search.value)) draw(trial);
            start(trial, *slot);
        }
        return left;
    }

    // A new attempt of `trial` in `slot`, its output appended to DIR/<trial>.out.
    void start(TrialRecord& trial, std::size_t slot) {
        const auto launcher = trial_launcher(sweep_, placement_, slot, trial_command(sweep_, *scheduler_, trial, dir_),
                                             {{}, dir_ + "/" + trial.name + ".out", trial_env_}, slurm_);
        trial.status = TrialStatus::running, ++trial.attempts;
        trial.started_unix.push_back(runlog::now_seconds());
        runlog::save_state(dir_, state_);
        running_.push_back({trial.index, launcher->launch({}), slot, {}});
        log::info("sweep: {} started (attempt {}): {}", trial.name, trial.attempts, values_text(trial.values));
        log::debug("sweep: {}'s step: {}", trial.name, launcher->describe({}));
    }

    // The searcher's values for a trial about to start its first attempt, from every trial
    // finished so far with a value of each objective (BayesOpt, Nevergrad: tune.metric); with
    // tune.repeat, the values of its group's first trial (which starts before it), and its place in
    // the group as train.__trial_index__ (tune.repeat_set_index).
    void draw(TrialRecord& trial) {
        const auto repeat = static_cast<std::size_t>(sweep_.tune.repeat.value);
        if (trial.index % repeat != 0) trial.values = drawn_values(state_.trials[trial.index - trial.index % repeat]);
        else draw_new(trial);
        if (repeat > 1 && sweep_.tune.repeat_set_index.value)
            trial.values.emplace_back(kTrialIndexKey, std::to_string(trial.index % repeat));
    }

    void draw_new(TrialRecord& trial) {
        if (sweep_.tune.search.value != SearchKind::optuna) {
            auto [module, settings] = python_searcher(sweep_);
            const bool by_milestones = sweep_.tune.search.value == SearchKind::bohb;
            trial.values = python_search_trial({module, &sweep_.space, sweep_.tune.mode.value, seed_, trial.index, settings,
                                                by_milestones ? milestone_results()
                                                              : finished_trials({{sweep_.tune.metric.value, sweep_.tune.mode.value}})});
            return;
        }
        trial.values = optuna_trial({&sweep_.space, sweep_.optuna.space.value, sweep_.objectives, seed_, trial.index,
                                     sweep_.optuna.n_startup_trials.value, finished_trials(sweep_.objectives)});
    }

    // Every drawn configuration whose trials all finished with a value of each objective, with
    // their mean (one trial each without tune.repeat).
    std::vector<FinishedTrial> finished_trials(const std::vector<Objective>& objectives) const {
        const auto repeat = static_cast<std::size_t>(sweep_.tune.repeat.value);
        std::vector<FinishedTrial> found;
        for (std::size_t first = 0; first + repeat <= state_.trials.size(); first += repeat) {
            FinishedTrial finished{drawn_values(state_.trials[first]), std::vector<double>(objectives.size(), 0.0)};
            bool complete = true;
            for (std::size_t i = first; i < first + repeat && complete; ++i) {
                const TrialRecord& other = state_.trials[i];
                complete = other.status == TrialStatus::terminated;
                for (std::size_t o = 0; o < objectives.size() && complete; ++o) {
                    const std::optional<double> value = final_value(other, objectives[o].metric);
                    complete = value.has_value();
                    if (complete) finished.metrics[o] += *value / static_cast<double>(repeat);
                }
            }
            if (complete) found.push_back(std::move(finished));
        }
        return found;
    }

    // Every trial's tune.metric at every HyperBand milestone it reached, the milestone its budget
    // (BOHB's data: Ray's HyperBandForBOHB tells TuneBOHB each result it pauses a trial at).
    std::vector<FinishedTrial> milestone_results() const {
        std::vector<FinishedTrial> found;
        for (const TrialRecord& trial : state_.trials)
            for (const RungDecision& decision : trial.decisions)
                found.push_back({drawn_values(trial), {decision.value}, decision.rung});
        return found;
    }

    // A finished trial's final value of `metric`: its last scheduler decision's where the sweep
    // decides by that metric, else its last reported row's.
    std::optional<double> final_value(const TrialRecord& trial, const std::string& metric) const {
        if (!trial.decisions.empty() && metric == sweep_.tune.metric.value) return trial.decisions.back().value;
        return metrics::last_value(metrics::metric_series(dir_ + "/" + trial.name, metric));
    }

    void reap() {
        for (auto it = running_.begin(); it != running_.end();) {
            const int code = it->step->poll();
            if (code < 0) { ++it; continue; }
            placement_.nodes.give_back(it->slot);
            finished(state_.trials[it->trial], code, *it);
            it = running_.erase(it);
        }
    }

    // What a step that ended done means is the scheduler's to say (and it may end a trial on any
    // end); how else the step's code counts is classify_trial_exit's rule (trial_exit.hpp); a
    // failed step whose node was lost is retried without counting it.
    void finished(TrialRecord& trial, int code, Running& step) {
        trial.last_exit = code;
        const TrialExit exit = classify_trial_exit(code, {placement_.stopping(), step.ended_by_sweep, stop_signals_});
        const bool failed = exit.end == TrialEnd::failed;
        if (failed) check_nodes();
        if (failed && step.hosts.empty()) step.hosts = attempt_hosts(dir_ + "/" + trial.name, trial.started_unix.back());
        const bool node_lost = failed && placement_.nodes.touches_lost(step.hosts);
        if (!scheduler_->step_ended(scheduling_, trial, exit.end)) not_done(trial, exit, node_lost);
        runlog::save_state(dir_, state_);
        const std::string why = node_lost ? " (a node under it was lost: retried, not counted as its failure)"
            : *exit.why != '\0' ? fmt::format(" ({}: retried, not counted as its failure)", exit.why) : "";
        log::info("sweep: {} ended with exit {}: {}{} ({})", trial.name, trial.last_exit, runlog::status_name(trial.status), why,
                  dir_ + "/" + trial.name + ".out");
    }

    // A step that ended stopped or failed, which the scheduler left to the sweep: PENDING again
    // (stopped: after the sweep's stop; a node lost under it), or retried until it failed
    // tune.max_failures_per_trial + 1 times, then ERROR.
    void not_done(TrialRecord& trial, const TrialExit& exit, bool node_lost) {
        if (exit.end == TrialEnd::stopped) trial.status = TrialStatus::pending, stop_code_ = std::max(stop_code_, exit.code);
        else if (node_lost) trial.status = TrialStatus::pending, ++trial.node_losses;
        else if (++trial.failures > sweep_.tune.max_failures_per_trial.value) trial.status = TrialStatus::error;
        else trial.status = TrialStatus::pending;
    }

    // Inside an allocation, every kWatchNodesS: a running trial whose hosts went silent in its
    // heartbeats and whose Slurm daemon does not answer lost its node; its step is ended so that
    // the trial goes on elsewhere (its srun would wait for Slurm's SlurmdTimeout).
    void watch_nodes() {
        if (!placement_.use_srun || peer_timeout_s_ <= 0 || running_.empty()) return;
        const double now = runlog::now_seconds();
        if (now < next_watch_) return;
        next_watch_ = now + kWatchNodesS;
        for (Running& step : running_) {
            const TrialRecord& trial = state_.trials[step.trial];
            if (step.hosts.empty()) step.hosts = attempt_hosts(dir_ + "/" + trial.name, trial.started_unix.back());
            if (step.hosts.empty() || placement_.nodes.touches_lost(step.hosts)) continue;
            placement_.nodes.check_silent(slurm_, step.hosts, dir_ + "/" + trial.name, trial.started_unix.back(),
                                          peer_timeout_s_, [](const std::string& line) { log::warn("{}", line); });
        }
        for (Running& step : running_)
            if (placement_.nodes.touches_lost(step.hosts)) {
                log::warn("sweep: ending {}'s step: a node of it is lost", state_.trials[step.trial].name);
                step.ended_by_sweep = true;
                step.step->stop(kStopGraceS);
            }
    }

    // After a trial failed inside an allocation: a node lost under it leaves the sweep's nodes, and
    // its slot with it; when no trial fits on the nodes left the sweep stops and requeues its job
    // (a requeued job gets nodes anew).
    void check_nodes() {
        if (!placement_.use_srun) return;
        placement_.nodes.check_after_failure(slurm_, [](const std::string& line) { log::warn("{}", line); });
        if (placement_.nodes.slots() > 0 || stop_code_ != 0) return;
        log::warn("sweep: no trial of {} rank(s) fits on the nodes left (lost: {}): stopping the sweep to requeue it",
                  sweep_.tune.ranks_per_trial.value, placement_.nodes.lost().str());
        stop_code_ = exit_codes::requeue_needed;
    }

    int summary() const {
        std::size_t done = 0, failed = 0;
        for (const TrialRecord& trial : state_.trials) {
            done += trial.status == TrialStatus::terminated;
            failed += trial.status == TrialStatus::error;
        }
        if (stop_code_ != 0) {
            log::info("sweep stopped: {} of {} trials finished; the same sweep continues the rest", done,
                      state_.trials.size());
            if (placement_.job_id.empty() || stop_code_ == exit_codes::interrupted) return stop_code_;
            const launch::RequeueOutcome outcome =
                launch::request_requeue(slurm_, placement_.job_id, placement_.restart_count);
            log::info("{}", outcome.message);
            return outcome.exit_code;
        }
        log::info("sweep finished: {} trials TERMINATED, {} ERROR (trainrt results {})", done, failed, dir_);
        return done == 0 ? exit_codes::workload : exit_codes::finished;
    }

    const SweepConfig& sweep_;
    SweepPlacement placement_;
    std::unique_ptr<Scheduler> scheduler_;
    launch::SlurmClient& slurm_;  // the trials' steps inside an allocation, node checks, the requeue
    std::string dir_;
    SweepState state_;
    std::uint64_t seed_;
    std::vector<Running> running_;
    double peer_timeout_s_;  // the trials' failure.peer_timeout (0: no heartbeats to watch)
    std::vector<int> stop_signals_;  // the trials' stop.signals
    std::vector<std::string> trial_env_;  // set in each trial's environment (trial_threads.hpp)
    SchedulerContext scheduling_;  // what scheduler_ reads and changes: dir_, state_
    double next_watch_ = 0;
    int stop_code_ = 0;
};

}  // namespace

SweepPlacement place_trials(const SweepConfig& sweep, std::size_t total_ranks, const supervise::Allocation& allocation) {
    const auto per_trial = static_cast<std::size_t>(sweep.tune.ranks_per_trial.value);
    const auto configured = static_cast<std::size_t>(sweep.tune.max_concurrent_trials.value);
    SweepPlacement placement{TrialNodes(allocation, total_ranks, per_trial, configured)};
    placement.use_srun = !allocation.job_id.empty();
    return placement;
}

std::string sweep_dir(const SweepConfig& sweep) {
    return runlog::run_dir_path(RunSettings::read(sweep.base));
}

int run_sweep(const SweepConfig& sweep, const SweepPlacement& placement, launch::SlurmClient& slurm) {
    if (sweep.tune.search.value == SearchKind::optuna) check_optuna(sweep.optuna.space.value);  // before any file
    if (drawn_at_start(sweep.tune.search.value) && sweep.tune.search.value != SearchKind::optuna) {
        const auto [module, settings] = python_searcher(sweep);
        check_python_search(module, settings);
    }
    std::unique_ptr<Scheduler> scheduler = make_scheduler(sweep);  // its settings checked: before any file
    return SweepRun(sweep, placement, std::move(scheduler), slurm).run();
}

int run_sweep(const SweepConfig& sweep, const SweepPlacement& placement) {
    return run_sweep(sweep, placement, *launch::make_slurm_client());
}

}  // namespace trainrt::tune
