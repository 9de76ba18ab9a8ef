// PBT (pbt.hpp) as the sweep's scheduler: each step of a trial trains to its next boundary and
// ends there (a finished run with its checkpoint committed); at the boundary the trial is scored
// against the population and may go on from a better trial's checkpoint with that trial's values,
// explored.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "checkpoint/clone.hpp"
#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/manifest.hpp"
#include "log/log.hpp"
#include "metrics/metric_series.hpp"
#include "trainrt/error.hpp"
#include "tune/pbt.hpp"
#include "tune/scheduler.hpp"

namespace trainrt::tune {
namespace {

using runlog::RungDecision;
using runlog::TrialRecord;
using runlog::TrialStatus;

// PBT's boundaries: every perturbation_interval epochs up to the base job's train.epochs.
std::vector<std::int64_t> pbt_boundaries_of(const SweepConfig& sweep) {
    const std::string total = sweep.base.get_or(kTrainEpochsKey, "");
    if (total.empty())
        throw ConfigError(fmt::format("tune: scheduler = pbt trains every trial to the base job's train.epochs, which "
                                      "{} does not set; set it (e.g. train.epochs = 20)", sweep.base_path));
    return pbt_boundaries(sweep.pbt.perturbation_interval.value, std::stoll(total));
}

class PbtScheduler final : public Scheduler {
public:
    explicit PbtScheduler(const SweepConfig& sweep)
        : sweep_(sweep), boundaries_(pbt_boundaries_of(sweep)), seed_(run_seed(sweep.base)) {}

    void add_definition(std::map<std::string, std::string>& definition) const override {
        for (const std::int64_t boundary : boundaries_) definition["tune.pbt.boundaries"] += fmt::format("{} ", boundary);
        definition[sweep_.pbt.quantile_fraction.key] = real_text(sweep_.pbt.quantile_fraction.value);
        definition[sweep_.pbt.resample_probability.key] = real_text(sweep_.pbt.resample_probability.value);
    }

    std::int64_t first_target() const override { return boundaries_.front(); }

    // train.epochs = the next boundary (0 once the trial is done: the base job's own).
    std::vector<std::string> step_args(const TrialRecord& trial) const override {
        if (trial.target > 0) return {fmt::format("--train.epochs={}", trial.target)};
        return {};
    }

    bool step_ended(SchedulerContext& context, TrialRecord& trial, TrialEnd end) override {
        if (end != TrialEnd::done) return false;
        boundary_reached(context, trial);
        return true;
    }

private:
    void boundary_reached(SchedulerContext& context, TrialRecord& trial) const;
    std::optional<double> target_metric(const SchedulerContext& context, TrialRecord& trial) const;
    std::optional<std::int64_t> exploit(const SchedulerContext& context, TrialRecord& trial, const TrialRecord& donor,
                                        std::uint64_t draw) const;

    const SweepConfig& sweep_;
    std::vector<std::int64_t> boundaries_;
    std::uint64_t seed_;  // run.seed: every draw comes from (seed, trial, boundary)
};

// PBT at the boundary the trial ran to: a trial in the bottom quantile goes on from a top
// trial's checkpoint with its values explored; every other trial goes on as it is.
void PbtScheduler::boundary_reached(SchedulerContext& context, TrialRecord& trial) const {
    const bool maximize = sweep_.tune.mode.value == ScoreOrder::max;
    const std::optional<double> value = target_metric(context, trial);
    if (!value) return;
    std::vector<PbtScore> scores{{trial.index, *value}};
    for (const TrialRecord& other : context.state.trials)
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
        if (auto epoch = exploit(context, trial, context.state.trials[donor], draw)) {
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

// The trial's metric at the epoch it ran to; without one it is ERROR (PBT compares trials by it).
std::optional<double> PbtScheduler::target_metric(const SchedulerContext& context, TrialRecord& trial) const {
    const std::optional<double> value = metrics::value_at_epoch(
        metrics::metric_series(context.dir + "/" + trial.name, sweep_.tune.metric.value), trial.target);
    if (!value) {
        trial.status = TrialStatus::error;
        log::warn("sweep: {} reported no {} at epoch {}: ERROR (PBT compares trials by it)", trial.name,
                  sweep_.tune.metric.value, trial.target);
    }
    return value;
}

// The newest committed checkpoint of `run_dir` whose reported epoch is at most `epoch`, and
// that epoch; ("", 0) when none is.
std::pair<std::string, std::int64_t> state_at(const std::string& run_dir, std::int64_t epoch) {
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

// Copies `donor`'s state at `trial`'s epoch (its newest checkpoint saved at or before it: the
// population compared at the same time) into `trial`'s run and explores the donor's values;
// the epoch the copy was saved at, or nothing when there is none to copy.
std::optional<std::int64_t> PbtScheduler::exploit(const SchedulerContext& context, TrialRecord& trial,
                                                  const TrialRecord& donor, std::uint64_t draw) const {
    const std::string from_run = context.dir + "/" + donor.name, to_run = context.dir + "/" + trial.name;
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
              values_text(donor.values), name, epoch, values_text(trial.values));
    return epoch;
}

}  // namespace

std::unique_ptr<Scheduler> make_pbt_scheduler(const SweepConfig& sweep) { return std::make_unique<PbtScheduler>(sweep); }

}  // namespace trainrt::tune
