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
#include "checkpoint/catalog.hpp"
#include "tune/asha.hpp"
#include "tune/optuna_search.hpp"
#include "tune/pbt.hpp"
#include "tune/trial_exit.hpp"
#include "tune/trial_threads.hpp"
#include "launch/requeue.hpp"
#include "launch/slurm_client.hpp"
#include "launch/step_command.hpp"
#include "log/log.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::tune {
namespace {

// How often running trials' heartbeats are looked at for a lost node, and how long a step ended
// for one gets before SIGKILL (srun waits for its tasks there).
constexpr double kWatchNodesS = 2;
constexpr double kStopGraceS = 2;

std::string trial_name(std::size_t index) { return fmt::format("trial_{:04d}", index); }

// PBT's boundaries: every perturbation_interval epochs up to the base job's train.epochs.
std::vector<std::int64_t> pbt_boundaries_of(const SweepConfig& sweep) {
    const std::string total = sweep.base.get_or(kTrainEpochsKey, "");
    if (total.empty())
        throw ConfigError(fmt::format("tune: scheduler = pbt trains every trial to the base job's train.epochs, which "
                                      "{} does not set; set it (e.g. train.epochs = 20)", sweep.base_path));
    return pbt_boundaries(sweep.pbt.perturbation_interval.value, std::stoll(total));
}

// What a restarted sweep must share with the stored one for its trials to be the same.
std::map<std::string, std::string> definition_of(const SweepConfig& sweep) {
    std::map<std::string, std::string> definition{
        {sweep.tune.base.key, sweep.base_path},
        {sweep.tune.metric.key, sweep.tune.metric.value},
        {sweep.tune.mode.key, name_of(sweep.tune.mode.value)},
        {sweep.tune.num_samples.key, std::to_string(sweep.trials)},
        {sweep.tune.search.key, name_of(sweep.tune.search.value)},
        {sweep.tune.scheduler.key, name_of(sweep.tune.scheduler.value)},
        {sweep.tune.ranks_per_trial.key, std::to_string(sweep.tune.ranks_per_trial.value)},
        {RunSettings::seed_key(), std::to_string(RunSettings::read(sweep.base).seed.value)}};
    if (sweep.tune.scheduler.value == SchedulerKind::asha) {
        for (const std::int64_t rung : asha_rungs(sweep.asha)) definition["tune.asha.rungs"] += fmt::format("{} ", rung);
        if (sweep.asha.time_attr.value != "epoch") definition[sweep.asha.time_attr.key] = sweep.asha.time_attr.value;
    }
    if (sweep.tune.scheduler.value == SchedulerKind::pbt) {
        for (const std::int64_t boundary : pbt_boundaries_of(sweep)) definition["tune.pbt.boundaries"] += fmt::format("{} ", boundary);
        definition[sweep.pbt.quantile_fraction.key] = real_text(sweep.pbt.quantile_fraction.value);
        definition[sweep.pbt.resample_probability.key] = real_text(sweep.pbt.resample_probability.value);
    }
    if (sweep.tune.search.value == SearchKind::optuna)
        definition[sweep.optuna.n_startup_trials.key] = std::to_string(sweep.optuna.n_startup_trials.value);
    for (const Domain& domain : sweep.space) definition["space." + domain.key] = domain.text();
    return definition;
}

// What the scheduler sets for a trial's step. ASHA: the rungs left to decide as pause points (the
// trial waits at each for the sweep's verdict) and, counting epochs, train.epochs = max_t; PBT:
// train.epochs = the next boundary.
std::vector<std::string> scheduler_args(const SweepConfig& sweep, const TrialRecord& trial) {
    if (sweep.tune.scheduler.value == SchedulerKind::asha) {
        std::vector<std::string> args{"--stop.pause_by=" + sweep.asha.time_attr.value,
                                      "--stop.pause_at=" + rungs_from(asha_rungs(sweep.asha), trial.target),
                                      "--stop.pause_metric=" + sweep.tune.metric.value};
        if (sweep.asha.time_attr.value == "epoch") args.push_back(fmt::format("--train.epochs={}", sweep.asha.max_t.value));
        return args;
    }
    if (trial.target > 0) return {fmt::format("--train.epochs={}", trial.target)};
    return {};
}

// One trial's step: this program on the base job with the trial's values, in its own run directory.
std::vector<std::string> trial_command(const SweepConfig& sweep, const SweepPlacement& placement,
                                       const TrialRecord& trial, const std::string& dir, std::size_t slot) {
    std::vector<std::string> argv = launch::step_command(
        placement.use_srun ? launch::StepLauncher::srun : launch::StepLauncher::mpiexec,
        {static_cast<int>(sweep.tune.ranks_per_trial.value), true, true});
    if (placement.use_srun)
        for (const std::string& option : placement.nodes.srun_options(slot)) argv.push_back(option);
    argv.insert(argv.end(), {launch::own_program(), "--config", sweep.base_path});
    argv.insert(argv.end(), sweep.overrides.begin(), sweep.overrides.end());
    for (const auto& [key, value] : trial.values) argv.push_back(fmt::format("--{}={}", key, value));
    for (std::string& arg : scheduler_args(sweep, trial)) argv.push_back(std::move(arg));
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

struct Running {
    std::size_t trial;
    launch::Child child;
    std::size_t slot;
    std::vector<std::string> hosts;  // its step's, from its start record (empty until written)
    bool ended_by_sweep = false;     // the sweep stopped it (a node under it was lost)
    std::uintmax_t rows_bytes = 0;   // its result.jsonl's size when the scheduler last read it
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
    SweepRun(const SweepConfig& sweep, const SweepPlacement& placement)
        : sweep_(sweep), placement_(placement), dir_(sweep_dir(sweep)), state_(prepare_state(sweep, dir_)),
          rungs_(asha_rungs(sweep.asha)),
          boundaries_(sweep.tune.scheduler.value == SchedulerKind::pbt ? pbt_boundaries_of(sweep) : std::vector<std::int64_t>{}),
          seed_(run_seed(sweep.base)),
          peer_timeout_s_(FailureSettings::read(sweep.base).peer_timeout.value),
          stop_signals_(StopSettings::read(sweep.base).signals.value.numbers),
          trial_env_(trial_environment(placement.nodes.slots() * static_cast<std::size_t>(sweep.tune.ranks_per_trial.value),
                                       std::getenv("OMP_NUM_THREADS"), placement.use_srun)) {}

    int run() {
        for (TrialRecord& trial : state_.trials)
            if (trial.status == TrialStatus::running) trial.status = TrialStatus::pending;  // resumes
        runlog::save_state(dir_, state_);
        log::info("sweep {}: {} trials of {} rank(s), {} at once", dir_, state_.trials.size(),
                  sweep_.tune.ranks_per_trial.value, placement_.nodes.slots());
        while (start_more() || !running_.empty()) {
            decide_running();
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
            if (asha() && decide_rows(trial) && trial.target == 0) {  // an earlier attempt's rows ended it
                trial.status = TrialStatus::terminated;
                runlog::save_state(dir_, state_);
                continue;
            }
            left = true;
            const std::optional<std::size_t> slot = placement_.nodes.take();
            if (!slot) break;
            if (trial.values.empty() && sweep_.tune.search.value == SearchKind::optuna) draw(trial);
            const std::vector<std::string> argv = trial_command(sweep_, placement_, trial, dir_, *slot);
            trial.status = TrialStatus::running, ++trial.attempts;
            trial.started_unix.push_back(runlog::now_seconds());
            runlog::save_state(dir_, state_);
            launch::SpawnOptions options{{}, dir_ + "/" + trial.name + ".out", trial_env_};
            running_.push_back({trial.index, launch::spawn(argv, options), *slot, {}});
            log::info("sweep: {} started (attempt {}): {}", trial.name, trial.attempts, values_text(trial));
        }
        return left;
    }

    // Optuna's values for a trial about to start its first attempt, from every trial finished so
    // far (its final metric: the last scheduler decision's, or its last reported row's).
    void draw(TrialRecord& trial) {
        OptunaRequest request{&sweep_.space, sweep_.tune.mode.value, seed_, trial.index,
                              sweep_.optuna.n_startup_trials.value, {}};
        for (const TrialRecord& other : state_.trials) {
            if (other.status != TrialStatus::terminated) continue;
            const std::optional<double> metric = other.decisions.empty()
                ? metrics::last_value(metrics::metric_series(dir_ + "/" + other.name, sweep_.tune.metric.value))
                : std::optional<double>(other.decisions.back().value);
            if (metric) request.finished.push_back({other.values, *metric});
        }
        trial.values = optuna_trial(request);
    }

    void reap() {
        for (auto it = running_.begin(); it != running_.end();) {
            const int code = it->child.poll();
            if (code < 0) { ++it; continue; }
            placement_.nodes.give_back(it->slot);
            finished(state_.trials[it->trial], code, *it);
            it = running_.erase(it);
        }
    }

    // How the step's code counts is classify_trial_exit's rule (trial_exit.hpp); a failed step
    // whose node was lost is retried without counting it.
    void finished(TrialRecord& trial, int code, Running& step) {
        trial.last_exit = code;
        const TrialExit exit = classify_trial_exit(code, {placement_.stopping(), step.ended_by_sweep, stop_signals_});
        const bool failed = exit.end == TrialEnd::failed;
        if (failed) check_nodes();
        if (failed && step.hosts.empty()) step.hosts = attempt_hosts(dir_ + "/" + trial.name, trial.started_unix.back());
        const bool node_lost = failed && placement_.nodes.touches_lost(step.hosts);
        if (asha()) decide_rows(trial);
        if (asha() && (exit.end == TrialEnd::done || trial.target == 0)) asha_ended(trial, exit.end);
        else if (exit.end == TrialEnd::done && sweep_.tune.scheduler.value == SchedulerKind::pbt) boundary_reached(trial);
        else if (exit.end == TrialEnd::done) trial.status = TrialStatus::terminated;
        else if (exit.end == TrialEnd::stopped) trial.status = TrialStatus::pending, stop_code_ = std::max(stop_code_, exit.code);
        else if (node_lost) trial.status = TrialStatus::pending, ++trial.node_losses;
        else if (++trial.failures > sweep_.tune.max_failures_per_trial.value) trial.status = TrialStatus::error;
        else trial.status = TrialStatus::pending;
        runlog::save_state(dir_, state_);
        const std::string why = node_lost ? " (a node under it was lost: retried, not counted as its failure)"
            : *exit.why != '\0' ? fmt::format(" ({}: retried, not counted as its failure)", exit.why) : "";
        log::info("sweep: {} ended with exit {}: {}{} ({})", trial.name, trial.last_exit, runlog::status_name(trial.status), why,
                  dir_ + "/" + trial.name + ".out");
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
            placement_.nodes.check_silent(slurm(), step.hosts, dir_ + "/" + trial.name, trial.started_unix.back(),
                                          peer_timeout_s_, [](const std::string& line) { log::warn("{}", line); });
        }
        for (Running& step : running_)
            if (placement_.nodes.touches_lost(step.hosts)) {
                log::warn("sweep: ending {}'s step: a node of it is lost", state_.trials[step.trial].name);
                step.ended_by_sweep = true;
                step.child.stop(kStopGraceS);
            }
    }

    launch::SlurmClient& slurm() {
        if (!slurm_) slurm_ = launch::make_slurm_client();
        return *slurm_;
    }

    // After a trial failed inside an allocation: a node lost under it leaves the sweep's nodes, and
    // its slot with it; when no trial fits on the nodes left the sweep stops and requeues its job
    // (a requeued job gets nodes anew).
    void check_nodes() {
        if (!placement_.use_srun) return;
        placement_.nodes.check_after_failure(slurm(), [](const std::string& line) { log::warn("{}", line); });
        if (placement_.nodes.slots() > 0 || stop_code_ != 0) return;
        log::warn("sweep: no trial of {} rank(s) fits on the nodes left (lost: {}): stopping the sweep to requeue it",
                  sweep_.tune.ranks_per_trial.value, placement_.nodes.lost().str());
        stop_code_ = exit_codes::requeue_needed;
    }

    // The trial's metric at the epoch it ran to; without one it is ERROR (the scheduler compares
    // trials by it).
    std::optional<double> target_metric(TrialRecord& trial, const char* scheduler) {
        const std::optional<double> value = metrics::value_at_epoch(
            metrics::metric_series(dir_ + "/" + trial.name, sweep_.tune.metric.value), trial.target);
        if (!value) {
            trial.status = TrialStatus::error;
            log::warn("sweep: {} reported no {} at epoch {}: ERROR ({} compares trials by it)", trial.name,
                      sweep_.tune.metric.value, trial.target, scheduler);
        }
        return value;
    }

    bool asha() const { return sweep_.tune.scheduler.value == SchedulerKind::asha; }

    // ASHA, every loop: the rows new in each running trial's result.jsonl decide its rungs.
    void decide_running() {
        if (!asha()) return;
        for (Running& step : running_) {
            std::error_code error;
            const auto bytes = std::filesystem::file_size(runlog::path_in(dir_ + "/" + state_.trials[step.trial].name, runlog::kResults), error);
            if (error || bytes == step.rows_bytes) continue;
            step.rows_bytes = bytes;
            decide_rows(state_.trials[step.trial]);  // each decision saves the state before its verdict
        }
    }

    // Decides every rung the trial's rows reached and writes each verdict where its step waits for
    // it (runlog::decision_path); true when it decided any. Rows without the metric (a built-in
    // workload's mid-epoch stop row) decide nothing, as in Ray, and its step does not wait at them.
    bool decide_rows(TrialRecord& trial) {
        const bool by_epoch = sweep_.asha.time_attr.value == "epoch";
        bool decided = false;
        for (const metrics::MetricPoint& row : metrics::metric_series(dir_ + "/" + trial.name, sweep_.tune.metric.value)) {
            const std::optional<double> t = by_epoch ? row.epoch : row.iteration;
            const std::int64_t rung = trial.target == 0 || !t ? 0 : rung_at(rungs_, trial.target, *t);
            if (rung == 0) continue;
            decided = true;
            decide(trial, rung, row.value);
        }
        return decided;
    }

    // ASHA at `rung` with the trial's `value` there: continue to the next rung, or stop here.
    void decide(TrialRecord& trial, std::int64_t rung, double value) {
        const bool maximize = sweep_.tune.mode.value == ScoreOrder::max;
        std::vector<double> at_rung{value};
        for (const TrialRecord& other : state_.trials)
            for (const RungDecision& decision : other.decisions)
                if (decision.rung == rung && other.index != trial.index) at_rung.push_back(decision.value);
        const double cutoff = asha_cutoff(at_rung, sweep_.asha.reduction_factor.value, maximize);
        const std::int64_t next = next_rung(rungs_, rung);
        const bool promoted = next != 0 && asha_promotes(value, cutoff, maximize);
        trial.decisions.push_back({rung, value, cutoff, at_rung.size(), promoted});
        trial.target = promoted ? next : 0;
        runlog::save_state(dir_, state_);  // before the verdict: a restarted sweep never decides a rung twice
        write_verdict(trial, rung, promoted);
        log::info("sweep: {} at {} {}: {} = {:.6g}, cutoff {:.6g} of {} trial(s): {}", trial.name,
                  sweep_.asha.time_attr.value, rung, sweep_.tune.metric.value, value, cutoff, at_rung.size(),
                  promoted ? fmt::format("continues to {}", next) : next == 0 ? "done" : "stopped early");
    }

    void write_verdict(const TrialRecord& trial, std::int64_t rung, bool go_on) {
        const std::string path = runlog::decision_path(dir_ + "/" + trial.name, rung);
        storage::make_dirs(std::filesystem::path(path).parent_path().string());
        storage::write_file_atomic(path, std::string(go_on ? runlog::kVerdictContinue : runlog::kVerdictStop) + "\n");
    }

    // An ASHA trial's step ended with every rung decided, or 0 before its next rung (its function
    // returned: TERMINATED with what it reported, as Ray's).
    void asha_ended(TrialRecord& trial, TrialEnd end) {
        trial.status = TrialStatus::terminated;
        if (end == TrialEnd::done && trial.target != 0)
            log::info("sweep: {} returned before {} {}: TERMINATED with what it reported", trial.name,
                      sweep_.asha.time_attr.value, trial.target);
    }

    // PBT at the boundary the trial ran to: a trial in the bottom quantile goes on from a top
    // trial's checkpoint with its values explored; every other trial goes on as it is.
    void boundary_reached(TrialRecord& trial) {
        const bool maximize = sweep_.tune.mode.value == ScoreOrder::max;
        const std::optional<double> value = target_metric(trial, "PBT");
        if (!value) return;
        std::vector<PbtScore> scores{{trial.index, *value}};
        for (const TrialRecord& other : state_.trials)
            if (other.index != trial.index && !other.decisions.empty()) scores.push_back({other.index, other.decisions.back().value});
        RungDecision decision{trial.target, *value, 0, scores.size(), true, -1};
        std::int64_t from = trial.target;
        const PbtQuantiles split = pbt_quantiles(scores, sweep_.pbt.quantile_fraction.value, maximize);
        const auto in = [](const std::vector<std::size_t>& group, std::size_t index) {
            return std::find(group.begin(), group.end(), index) != group.end();
        };
        if (pbt_next_boundary(boundaries_, trial.target) != 0 && in(split.lower, trial.index)) {
            const std::uint64_t draw = pbt_draw_seed(seed_, trial.index, trial.target);
            const std::size_t donor = pbt_pick_donor(split.upper, draw);
            if (auto epoch = exploit(trial, state_.trials[donor], draw)) {
                decision.promoted = false, decision.donor = static_cast<std::int64_t>(donor);
                from = *epoch;
            }
        }
        trial.decisions.push_back(decision);
        trial.target = pbt_next_boundary(boundaries_, from);
        trial.status = trial.target == 0 ? TrialStatus::terminated : TrialStatus::pending;
        log::info("sweep: {} at epoch {}: {} = {:.6g} ({} trial(s) scored){}", trial.name, decision.rung,
                  sweep_.tune.metric.value, *value, scores.size(),
                  trial.target == 0 ? ": done" : fmt::format(": continues to epoch {}", trial.target));
    }

    // Copies `donor`'s state at `trial`'s epoch (its newest checkpoint saved at or before it: the
    // population compared at the same time) into `trial`'s run and explores the donor's values;
    // the epoch the copy was saved at, or nothing when there is none to copy.
    std::optional<std::int64_t> exploit(TrialRecord& trial, const TrialRecord& donor, std::uint64_t draw) {
        const std::string from_run = dir_ + "/" + donor.name, to_run = dir_ + "/" + trial.name;
        const auto [name, epoch] = state_at(from_run, trial.target);
        if (name.empty()) return std::nullopt;
        try {
            checkpoint::clone_checkpoint(from_run, name, to_run);
        } catch (const Error& error) {
            log::warn("sweep: {} keeps its own state: copying {}'s {} failed: {}", trial.name, donor.name, name,
                      error.what());
            return std::nullopt;
        }
        trial.values = pbt_explore(sweep_.space, donor.values, sweep_.pbt.resample_probability.value, draw);
        log::info("sweep: {} copies {} ({}; {}, epoch {}) and goes on with {}", trial.name, donor.name,
                  values_text(donor), name, epoch, values_text(trial));
        return epoch;
    }

    // The newest committed checkpoint of `run_dir` whose reported epoch is at most `epoch`, and
    // that epoch; ("", 0) when none is.
    static std::pair<std::string, std::int64_t> state_at(const std::string& run_dir, std::int64_t epoch) {
        const std::vector<std::string> names = checkpoint::committed_names(run_dir);
        for (auto name = names.rbegin(); name != names.rend(); ++name) {
            try {
                const auto metrics = checkpoint::read_manifest(checkpoint::checkpoints_dir(run_dir) + "/" + *name).metrics;
                if (metrics.contains("epoch") && metrics["epoch"].is_number_integer() &&
                    metrics["epoch"].get<std::int64_t>() <= epoch)
                    return {*name, metrics["epoch"].get<std::int64_t>()};
            } catch (const Error&) {  // being removed by the donor's retention: an older one
            }
        }
        return {"", 0};
    }

    static std::string values_text(const TrialRecord& trial) {
        std::string text;
        for (const auto& [key, value] : trial.values) text += fmt::format("{}{}={}", text.empty() ? "" : " ", key, value);
        return text;
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
            auto slurm = launch::make_slurm_client();
            const launch::RequeueOutcome outcome =
                launch::request_requeue(*slurm, placement_.job_id, placement_.restart_count);
            log::info("{}", outcome.message);
            return outcome.exit_code;
        }
        log::info("sweep finished: {} trials TERMINATED, {} ERROR (trainrt results {})", done, failed, dir_);
        return done == 0 ? exit_codes::workload : exit_codes::finished;
    }

    const SweepConfig& sweep_;
    SweepPlacement placement_;
    std::string dir_;
    SweepState state_;
    std::vector<std::int64_t> rungs_;  // ASHA's
    std::vector<std::int64_t> boundaries_;  // PBT's
    std::uint64_t seed_;
    std::vector<Running> running_;
    std::unique_ptr<launch::SlurmClient> slurm_;  // once a node is checked inside an allocation
    double peer_timeout_s_;  // the trials' failure.peer_timeout (0: no heartbeats to watch)
    std::vector<int> stop_signals_;  // the trials' stop.signals
    std::vector<std::string> trial_env_;  // set in each trial's environment (trial_threads.hpp)
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

namespace {

// Trial `index` as it enters the sweep: PENDING, its values drawn now (Optuna's when it starts),
// its first target the scheduler's first rung or boundary.
TrialRecord new_trial(const SweepConfig& sweep, std::size_t index) {
    const std::uint64_t seed = run_seed(sweep.base);
    const bool drawn_at_start = sweep.tune.search.value == SearchKind::optuna;  // by Optuna, from the results before
    TrialRecord trial{index, trial_name(index),
                      drawn_at_start ? TrialValues{} : native_trial(sweep.space, sweep.tune.search.value, seed, index)};
    trial.target = sweep.tune.scheduler.value == SchedulerKind::asha ? asha_rungs(sweep.asha).front()
                   : sweep.tune.scheduler.value == SchedulerKind::pbt ? pbt_boundaries_of(sweep).front()
                                                                      : 0;
    return trial;
}

// --resume-changed: the recorded trials, their values and decisions stand; the new definition is
// stored; trials beyond the stored ones are added, and never-started PENDING trials beyond
// num_samples are dropped (a started one is kept: its work is not thrown away).
SweepState adopt_definition(SweepState stored, const SweepConfig& sweep, const std::string& dir, const std::string& change) {
    stored.definition = definition_of(sweep);
    const std::size_t before = stored.trials.size();
    while (stored.trials.size() > sweep.trials && stored.trials.back().status == TrialStatus::pending &&
           stored.trials.back().attempts == 0)
        stored.trials.pop_back();
    for (std::size_t i = stored.trials.size(); i < sweep.trials; ++i) stored.trials.push_back(new_trial(sweep, i));
    log::info("sweep {}: going on with a changed definition ({}; --resume-changed): {} trials, {} before; recorded "
              "trials and decisions stand{}", dir, change, stored.trials.size(), before,
              stored.trials.size() > sweep.trials ? fmt::format(" ({} started beyond num_samples kept)", stored.trials.size() - sweep.trials) : "");
    return stored;
}

// The stored state when its definition is this sweep's, else a new one (see prepare_state).
SweepState stored_or_new_state(const SweepConfig& sweep, const std::string& dir) {
    for (const char* file : {runlog::kRunJson, runlog::kEvents, runlog::kResults})
        if (std::filesystem::exists(runlog::path_in(dir, file)))
            throw ConfigError(fmt::format("tune: {} is a run's directory (it holds {}); give the sweep a run.name of "
                                          "its own, e.g. --run.name=sweep", dir, file));
    storage::make_dirs(dir);
    SweepState stored = runlog::load_state(dir);
    const auto definition = definition_of(sweep);
    if (!stored.trials.empty()) {
        if (sweep.resume_errored && runlog::reopen_errored(stored) > 0)
            log::info("sweep {}: its ERROR trials go on from their checkpoints (--resume-errored)", dir);
        const std::string change = runlog::definition_change(stored.definition, definition);
        if (change.empty()) return stored;
        if (sweep.resume_changed) return adopt_definition(std::move(stored), sweep, dir, change);
        throw ConfigError(fmt::format("tune: {} holds a sweep with another definition ({}); give the new "
                                      "sweep another run.name, move the directory away, or go on with its "
                                      "trials under the new definition with --resume-changed", dir, change));
    }
    SweepState state;
    state.definition = definition;
    for (std::size_t i = 0; i < sweep.trials; ++i) state.trials.push_back(new_trial(sweep, i));
    return state;
}

}  // namespace

SweepState prepare_state(const SweepConfig& sweep, const std::string& dir) {
    SweepState state = stored_or_new_state(sweep, dir);
    state.metric = sweep.tune.metric.value;
    state.mode = name_of(sweep.tune.mode.value);
    return state;
}

int run_sweep(const SweepConfig& sweep, const SweepPlacement& placement) {
    if (sweep.tune.search.value == SearchKind::optuna) check_optuna();  // before any file
    if (sweep.tune.scheduler.value == SchedulerKind::pbt) pbt_boundaries_of(sweep);  // train.epochs set: before any file

    return SweepRun(sweep, placement).run();
}

}  // namespace trainrt::tune
