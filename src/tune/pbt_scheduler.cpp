// PBT (pbt.hpp) as the sweep's scheduler: each step of a trial trains to its next boundary and
// ends there (step_target.hpp). At the boundary the trial is scored against the population and may
// go on from a better trial's checkpoint with that trial's values, explored: perturbed (pbt) or
// picked by PB2's bandit (pb2, pb2.hpp).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "checkpoint/clone.hpp"
#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/manifest.hpp"
#include "log/log.hpp"
#include "metrics/metric_series.hpp"
#include "runtime/stop_criteria.hpp"
#include "trainrt/error.hpp"
#include "tune/pb2.hpp"
#include "tune/pbt.hpp"
#include "tune/scheduler.hpp"
#include "tune/step_target.hpp"

namespace trainrt::tune {
namespace {

using runlog::RungDecision;
using runlog::TrialRecord;
using runlog::TrialStatus;

bool counts_iterations(const SweepConfig& sweep) { return sweep.pbt.time_attr.value == "training_iteration"; }

// PBT's boundaries: every perturbation_interval up to a trial's end: by epoch the base job's
// train.epochs, by training_iteration its [stop] criteria's training_iteration>=N. ConfigError,
// naming the base job, when it sets no end.
std::vector<std::int64_t> pbt_boundaries_of(const SweepConfig& sweep) {
    const std::int64_t interval = sweep.pbt.perturbation_interval.value;
    if (counts_iterations(sweep)) {
        const std::optional<std::int64_t> end = pbt_iteration_end(runtime::stop_criteria(StopSettings::read(sweep.base)));
        if (!end)
            throw ConfigError(fmt::format(
                "tune: tune.pbt.time_attr = training_iteration sets boundaries up to each trial's end, which {} does "
                "not bound: set [stop] criteria = training_iteration>=N there (Ray's RunConfig(stop="
                "{{\"training_iteration\": N}})), or count epochs (tune.pbt.time_attr = epoch)", sweep.base_path));
        return pbt_boundaries(interval, *end);
    }
    const std::string total = sweep.base.get_or(kTrainEpochsKey, "");
    if (total.empty())
        throw ConfigError(fmt::format("tune: scheduler = pbt trains every trial to the base job's train.epochs, which "
                                      "{} does not set; set it (e.g. train.epochs = 20)", sweep.base_path));
    return pbt_boundaries(interval, std::stoll(total));
}

// tune.pbt.start_from_base's keys, each a [space] key the base job sets. ConfigError otherwise, and
// with search = optuna (which draws every [space] key of a trial).
std::vector<std::string> start_keys_of(const SweepConfig& sweep) {
    const auto& setting = sweep.pbt.start_from_base;
    std::vector<std::string> keys;
    std::stringstream list(setting.value);
    for (std::string item; std::getline(list, item, ',');) {
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (item.empty()) continue;
        const bool in_space = std::any_of(sweep.space.begin(), sweep.space.end(), [&](const Domain& d) { return d.key == item; });
        const char* problem = !in_space ? "which [space] does not hold (PBT explores a key within its [space] domain)"
            : sweep.base.get_or(item, "").empty() ? "which the base job does not set" : nullptr;
        if (problem) throw ConfigError(fmt::format("tune: {} ({}) names '{}', {}", setting.key, setting.source, item, problem));
        keys.push_back(item);
    }
    if (!keys.empty() && drawn_at_start(sweep.tune.search.value))
        throw ConfigError(fmt::format("tune: {} ({}) with search = {}: the searcher draws every [space] key of a "
                                      "trial; use search = random", setting.key, setting.source,
                                      name_of(sweep.tune.search.value)));
    return keys;
}

class PbtScheduler final : public Scheduler {
public:
    explicit PbtScheduler(const SweepConfig& sweep)
        : sweep_(sweep), boundaries_(pbt_boundaries_of(sweep)), start_keys_(start_keys_of(sweep)),
          criteria_(runtime::stop_criteria(StopSettings::read(sweep.base))), seed_(run_seed(sweep.base)),
          bandit_(sweep.tune.scheduler.value == SchedulerKind::pb2), bounds_(bandit_ ? pb2_bounds(sweep.space)
                                                                                 : std::vector<Pb2Bound>{}) {}

    void add_definition(std::map<std::string, std::string>& definition) const override {
        for (const std::int64_t boundary : boundaries_) definition["tune.pbt.boundaries"] += fmt::format("{} ", boundary);
        definition[sweep_.pbt.quantile_fraction.key] = real_text(sweep_.pbt.quantile_fraction.value);
        definition[sweep_.pbt.resample_probability.key] = real_text(sweep_.pbt.resample_probability.value);
        if (counts_iterations(sweep_)) definition[sweep_.pbt.time_attr.key] = sweep_.pbt.time_attr.value;
        if (!start_keys_.empty()) definition[sweep_.pbt.start_from_base.key] = sweep_.pbt.start_from_base.value;
    }

    std::int64_t first_target(std::size_t) const override { return boundaries_.front(); }

    // The step ends at the next boundary: train.epochs = it, or a pause there (its verdict written
    // by ended_before_start). None once the trial is done (target 0).
    std::vector<std::string> step_args(const TrialRecord& trial) const override {
        if (trial.target <= 0) return {};
        return step_to_target_args(counts_iterations(sweep_), trial.target, sweep_.tune.metric.value);
    }

    // Before a step starts: a new trial's start_from_base values become the base job's (saved);
    // by training_iteration, the verdict at its next boundary, stop, is in place. Never ends it.
    bool ended_before_start(SchedulerContext& context, TrialRecord& trial) override {
        if (trial.attempts == 0 && trial.decisions.empty() && start_at_base(trial)) context.save();
        if (counts_iterations(sweep_) && trial.target > 0) stop_at_target(context.dir + "/" + trial.name, trial.target);
        return false;
    }

    bool step_ended(SchedulerContext& context, TrialRecord& trial, TrialEnd end) override {
        if (end != TrialEnd::done) return false;
        boundary_reached(context, trial);
        return true;
    }

private:
    bool start_at_base(TrialRecord& trial) const;
    void boundary_reached(SchedulerContext& context, TrialRecord& trial) const;
    void ended_before_boundary(TrialRecord& trial, bool own_criteria) const;
    void exploit_if_lower(const SchedulerContext& context, TrialRecord& trial, const std::vector<PbtScore>& scores,
                          RungDecision& decision) const;
    bool exploit(const SchedulerContext& context, TrialRecord& trial, const TrialRecord& donor, std::int64_t time,
                 std::uint64_t draw) const;
    runlog::TrialValues explored(const SchedulerContext& context, const TrialRecord& trial, const TrialRecord& donor,
                                 std::int64_t time, std::uint64_t draw) const;

    const SweepConfig& sweep_;
    std::vector<std::int64_t> boundaries_;
    std::vector<std::string> start_keys_;            // tune.pbt.start_from_base
    std::vector<runtime::StopCriterion> criteria_;  // the base job's own [stop] criteria
    std::uint64_t seed_;  // run.seed: every draw comes from (seed, trial, boundary)
    bool bandit_;         // pb2: explore by the Gaussian-process bandit
    std::vector<Pb2Bound> bounds_;  // pb2: every [space] domain's bounds
};

// Sets the trial's start_from_base values to the base job's; true when one changed.
bool PbtScheduler::start_at_base(TrialRecord& trial) const {
    bool changed = false;
    for (auto& [key, value] : trial.values) {
        if (std::find(start_keys_.begin(), start_keys_.end(), key) == start_keys_.end()) continue;
        const std::string base = sweep_.base.get(key);
        changed = changed || value != base;
        value = base;
    }
    return changed;
}

// PBT where the trial's step ended: at its boundary, scored against the population at that time;
// a trial in the bottom quantile goes on from a top trial's checkpoint with its values explored,
// every other goes on as it is, either to the boundary after this one (a copy saved before this
// boundary is trained on from there, never decided at this boundary again: Ray hands the
// exploiting trial its donor's perturbation time); at the last boundary, or when its own [stop]
// criteria ended it, it is done.
void PbtScheduler::boundary_reached(SchedulerContext& context, TrialRecord& trial) const {
    const std::string run_dir = context.dir + "/" + trial.name;
    const std::optional<StepPoint> at =
        step_point(metrics::metric_series(run_dir, sweep_.tune.metric.value), trial.target, counts_iterations(sweep_));
    if (!at) return ended_before_boundary(trial, met_own_criteria(criteria_, run_dir));
    const std::vector<PbtScore> scores = pbt_scores_at(context.state.trials, trial.index, at->value, at->time);
    RungDecision decision{at->time, at->value, 0, scores.size(), true, -1, trial.values};
    const bool last = pbt_next_boundary(boundaries_, at->time) == 0 || met_own_criteria(criteria_, run_dir);
    if (!last) exploit_if_lower(context, trial, scores, decision);
    trial.decisions.push_back(decision);
    trial.target = last ? 0 : pbt_next_boundary(boundaries_, at->time);
    trial.status = trial.target == 0 ? TrialStatus::terminated : TrialStatus::pending;
    log::info("sweep: {} at {} {}: {} = {:.6g} ({} trial(s) scored){}", trial.name, sweep_.pbt.time_attr.value,
              decision.rung, sweep_.tune.metric.value, at->value, scores.size(),
              trial.target == 0 ? ": done" : fmt::format(": continues to {} {}", sweep_.pbt.time_attr.value, trial.target));
}

// A step that ended done before its boundary: TERMINATED with what it reported when its own [stop]
// criteria ended it or (by training_iteration) its function returned, as in Ray; by epoch ERROR,
// its metric missing at the epoch it was to train to (PBT compares trials by it).
void PbtScheduler::ended_before_boundary(TrialRecord& trial, bool own_criteria) const {
    if (own_criteria || counts_iterations(sweep_)) {
        trial.status = TrialStatus::terminated;
        log::info("sweep: {} ended before {} {} ({}): TERMINATED with what it reported", trial.name,
                  sweep_.pbt.time_attr.value, trial.target, own_criteria ? "its [stop] criteria" : "it returned");
        return;
    }
    trial.status = TrialStatus::error;
    log::warn("sweep: {} reported no {} at epoch {}: ERROR (PBT compares trials by it)", trial.name,
              sweep_.tune.metric.value, trial.target);
}

// A trial in the bottom quantile copies the state of a trial drawn from the top one, recorded in
// `decision` as its donor (unless the donor has no checkpoint to copy: the trial keeps its own).
void PbtScheduler::exploit_if_lower(const SchedulerContext& context, TrialRecord& trial,
                                    const std::vector<PbtScore>& scores, RungDecision& decision) const {
    const bool maximize = sweep_.tune.mode.value == ScoreOrder::max;
    const PbtQuantiles split = pbt_quantiles(scores, sweep_.pbt.quantile_fraction.value, maximize);
    if (std::find(split.lower.begin(), split.lower.end(), trial.index) == split.lower.end()) return;
    const std::uint64_t draw = pbt_draw_seed(seed_, trial.index, decision.rung);
    const std::size_t donor = pbt_pick_donor(split.upper, draw);
    if (!exploit(context, trial, context.state.trials[donor], decision.rung, draw)) return;
    decision.promoted = false, decision.donor = static_cast<std::int64_t>(donor);
}

// The newest committed checkpoint of `run_dir` saved at a time of at most `limit` (by epoch the
// epoch its manifest reports, by training_iteration its iteration), and that time; ("", 0) when
// none is.
std::pair<std::string, std::int64_t> state_at(const std::string& run_dir, std::int64_t limit, bool by_iteration) {
    const std::vector<std::string> names = checkpoint::committed_names(run_dir);
    for (auto name = names.rbegin(); name != names.rend(); ++name) {
        try {
            const auto manifest = checkpoint::read_manifest(checkpoint::checkpoints_dir(run_dir) + "/" + *name);
            std::optional<std::int64_t> time;
            if (by_iteration) time = manifest.iteration;
            else if (manifest.metrics.contains("epoch") && manifest.metrics["epoch"].is_number_integer())
                time = manifest.metrics["epoch"].get<std::int64_t>();
            if (time && *time <= limit) return {*name, *time};
        } catch (const Error&) {  // being removed by the donor's retention: an older one
        }
    }
    return {"", 0};
}

// Copies `donor`'s state at `time` (its newest checkpoint saved at or before it: the population
// compared at the same time) into `trial`'s run, whose next step resumes from the copy (counting
// on from the copy's iteration), and explores the donor's values; false when there is none to copy.
bool PbtScheduler::exploit(const SchedulerContext& context, TrialRecord& trial, const TrialRecord& donor,
                           std::int64_t time, std::uint64_t draw) const {
    const std::string from_run = context.dir + "/" + donor.name, to_run = context.dir + "/" + trial.name;
    const auto [name, saved_at] = state_at(from_run, time, counts_iterations(sweep_));
    if (name.empty()) return false;
    try {
        checkpoint::clone_checkpoint(from_run, name, to_run);
    } catch (const Error& error) {
        log::warn("sweep: {} keeps its own state: copying {}'s {} failed: {}", trial.name, donor.name, name,
                  error.what());
        return false;
    }
    trial.values = explored(context, trial, donor, time, draw);
    log::info("sweep: {} copies {} ({}; {}, {} {}) and goes on with {}", trial.name, donor.name,
              values_text(donor.values), name, sweep_.pbt.time_attr.value, saved_at, values_text(trial.values));
    return true;
}

// The donor's values explored: perturbed or drawn (pbt), or picked by the bandit from every
// trial's decisions so far (pb2).
runlog::TrialValues PbtScheduler::explored(const SchedulerContext& context, const TrialRecord& trial,
                                           const TrialRecord& donor, std::int64_t time, std::uint64_t draw) const {
    if (!bandit_) return pbt_explore(sweep_.space, donor.values, sweep_.pbt.resample_probability.value, draw);
    return pb2_explore(bounds_, donor.values, context.state.trials, trial.index, donor.index, time,
                       sweep_.tune.mode.value == ScoreOrder::max, draw);
}

}  // namespace

std::unique_ptr<Scheduler> make_pbt_scheduler(const SweepConfig& sweep) { return std::make_unique<PbtScheduler>(sweep); }

}  // namespace trainrt::tune
