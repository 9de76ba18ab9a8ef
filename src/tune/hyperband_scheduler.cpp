// HyperBand (hyperband.hpp) as the sweep's scheduler: each step of a trial trains to its bracket's
// milestone and ends there (step_target.hpp). The trial then waits, PENDING with its milestone
// reached (its last decision's rung is its target), until every trial still in its bracket has
// reached it too; then the best go on to the next milestone and the others are TERMINATED, as
// Ray's trials are paused, unpaused or stopped. A trial that ends before its milestone (its
// function returned, its own [stop] criteria) or fails for good leaves its bracket, which may then
// decide without it; one that enters a bracket late trains straight to the bracket's milestone.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "log/log.hpp"
#include "metrics/metric_series.hpp"
#include "runtime/stop_criteria.hpp"
#include "tune/hyperband.hpp"
#include "tune/scheduler.hpp"
#include "tune/step_target.hpp"

namespace trainrt::tune {
namespace {

using runlog::RungDecision;
using runlog::TrialRecord;
using runlog::TrialStatus;

// A trial whose step ended at its target and that waits there for its bracket.
bool reached(const TrialRecord& trial) {
    return trial.status == TrialStatus::pending && trial.target > 0 && !trial.decisions.empty() &&
           trial.decisions.back().rung >= trial.target;
}

bool in_bracket(const TrialRecord& trial) {
    return trial.status == TrialStatus::pending || trial.status == TrialStatus::running;
}

class HyperBandScheduler final : public Scheduler {
public:
    explicit HyperBandScheduler(const SweepConfig& sweep)
        : sweep_(sweep), shape_{sweep.hyperband.max_t.value, sweep.hyperband.reduction_factor.value},
          criteria_(runtime::stop_criteria(StopSettings::read(sweep.base))) {}

    void add_definition(std::map<std::string, std::string>& definition) const override {
        const HyperBandKeys& keys = sweep_.hyperband;
        definition[keys.time_attr.key] = keys.time_attr.value;
        definition[keys.max_t.key] = std::to_string(keys.max_t.value);
        definition[keys.reduction_factor.key] = real_text(keys.reduction_factor.value);
        definition[keys.stop_last_trials.key] = keys.stop_last_trials.value ? "true" : "false";
    }

    std::int64_t first_target(std::size_t index) const override { return target_at(hyperband_bracket(shape_, index).s, 0); }

    std::vector<std::string> step_args(const TrialRecord& trial) const override {
        if (trial.target <= 0) return {};
        return step_to_target_args(by_iteration(), trial.target, sweep_.tune.metric.value);
    }

    // The trial's bracket decides when all of it reached its milestone; a trial that still has to
    // reach it starts (by training_iteration with the verdict at its target in place).
    bool waits(SchedulerContext& context, TrialRecord& trial) override {
        const BracketPlace place = hyperband_bracket(shape_, trial.index);
        catch_up(context, place, trial);
        decide_bracket(context, place);
        if (trial.status != TrialStatus::pending || reached(trial)) return true;
        if (by_iteration() && trial.target > 0) stop_at_target(context.dir + "/" + trial.name, trial.target);
        return false;
    }

    bool step_ended(SchedulerContext& context, TrialRecord& trial, TrialEnd end) override {
        if (end != TrialEnd::done) return false;
        milestone_reached(context, trial);
        return true;
    }

private:
    bool by_iteration() const { return sweep_.hyperband.time_attr.value == "training_iteration"; }
    const std::string& time_attr() const { return sweep_.hyperband.time_attr.value; }

    // Bracket s's k-th milestone as a trial's target; 0 (its own end) for the last one when
    // stop_last_trials is off.
    std::int64_t target_at(int s, std::size_t k) const {
        const std::vector<std::int64_t> milestones = hyperband_milestones(shape_, s);
        if (k + 1 == milestones.size() && !sweep_.hyperband.stop_last_trials.value) return 0;
        return milestones[k];
    }

    std::vector<TrialRecord*> bracket_trials(SchedulerContext& context, const BracketPlace& place) const {
        std::vector<TrialRecord*> trials;
        for (TrialRecord& other : context.state.trials)
            if (in_bracket(other) && hyperband_bracket(shape_, other.index).bracket == place.bracket) trials.push_back(&other);
        return trials;
    }

    void catch_up(SchedulerContext& context, const BracketPlace& place, TrialRecord& trial) const;
    void decide_bracket(SchedulerContext& context, const BracketPlace& place) const;
    void milestone_reached(SchedulerContext& context, TrialRecord& trial) const;

    const SweepConfig& sweep_;
    HyperBandShape shape_;
    std::vector<runtime::StopCriterion> criteria_;  // the base job's own [stop] criteria
};

// A trial that has not started while its bracket went on past its first milestone trains to the
// bracket's milestone now (Ray: a trial added late catches up with its bracket).
void HyperBandScheduler::catch_up(SchedulerContext& context, const BracketPlace& place, TrialRecord& trial) const {
    if (trial.attempts != 0 || !trial.decisions.empty() || trial.target <= 0) return;
    std::int64_t milestone = trial.target;
    for (const TrialRecord* other : bracket_trials(context, place)) milestone = std::max(milestone, other->target);
    if (milestone == trial.target) return;
    trial.target = milestone;
    context.save();
}

// When every trial still in the bracket reached its milestone: the best go on to the next one,
// the others are TERMINATED, each decision recorded with the trials compared and the worst value kept.
void HyperBandScheduler::decide_bracket(SchedulerContext& context, const BracketPlace& place) const {
    const std::vector<TrialRecord*> trials = bracket_trials(context, place);
    if (trials.empty() || !std::all_of(trials.begin(), trials.end(), [&](const TrialRecord* t) {
            return reached(*t) && t->target == trials.front()->target; }))
        return;
    const std::vector<std::int64_t> milestones = hyperband_milestones(shape_, place.s);
    const auto stage = static_cast<std::size_t>(
        std::find(milestones.begin(), milestones.end(), trials.front()->target) - milestones.begin());
    const std::size_t keep = stage + 1 < milestones.size() ? hyperband_sizes(shape_, place.s)[stage + 1] : 0;
    std::vector<TrialScore> scores;
    for (const TrialRecord* t : trials) scores.push_back({t->index, t->decisions.back().value});
    const bool maximize = sweep_.tune.mode.value == ScoreOrder::max;
    const std::vector<std::size_t> kept = hyperband_keep(scores, keep, maximize);
    std::optional<double> cutoff;  // the worst value kept
    for (const TrialScore& score : scores)
        if (std::binary_search(kept.begin(), kept.end(), score.trial) &&
            (!cutoff || (maximize ? score.value < *cutoff : score.value > *cutoff)))
            cutoff = score.value;
    for (TrialRecord* t : trials) {
        const bool goes_on = std::binary_search(kept.begin(), kept.end(), t->index);
        RungDecision& decision = t->decisions.back();
        decision.promoted = goes_on, decision.seen = trials.size(), decision.cutoff = cutoff.value_or(0);
        t->target = goes_on ? target_at(place.s, stage + 1) : 0;
        t->status = goes_on ? TrialStatus::pending : TrialStatus::terminated;
        log::info("sweep: {} at {} {}: {} = {:.6g}, {} of bracket {} ({} trial(s)) kept: {}", t->name, time_attr(),
                  decision.rung, sweep_.tune.metric.value, decision.value, kept.size(), place.bracket, trials.size(),
                  goes_on ? (t->target > 0 ? fmt::format("continues to {}", t->target) : std::string("runs to its end"))
                          : std::string("stopped early"));
    }
    context.save();
}

// A step that ended done: at its milestone the trial waits for its bracket (at the bracket's last
// milestone, or when its own [stop] criteria ended it there, it is done); before it (its function
// returned, its own criteria, or it ran to its own end) it is TERMINATED with what it reported and
// leaves its bracket.
void HyperBandScheduler::milestone_reached(SchedulerContext& context, TrialRecord& trial) const {
    const std::string run_dir = context.dir + "/" + trial.name;
    const std::optional<StepPoint> at = trial.target <= 0 ? std::nullopt
        : step_point(metrics::metric_series(run_dir, sweep_.tune.metric.value), trial.target, by_iteration());
    const std::vector<std::int64_t> milestones = hyperband_milestones(shape_, hyperband_bracket(shape_, trial.index).s);
    if (!at) {
        if (trial.target > 0)
            log::info("sweep: {} ended before {} {}: TERMINATED with what it reported", trial.name, time_attr(), trial.target);
        trial.status = TrialStatus::terminated, trial.target = 0;
        return;
    }
    trial.decisions.push_back(RungDecision{at->time, at->value, 0, 0, false, -1});
    const bool own_end = met_own_criteria(criteria_, run_dir), last = own_end || trial.target == milestones.back();
    trial.status = last ? TrialStatus::terminated : TrialStatus::pending;
    if (last) trial.target = 0;
    log::info("sweep: {} at {} {}: {} = {:.6g}: {}", trial.name, time_attr(), at->time, sweep_.tune.metric.value,
              at->value, own_end ? "its own [stop] criteria ended it" : last ? "its bracket's last milestone, done"
                                                                          : "waits for the rest of its bracket");
}

}  // namespace

std::unique_ptr<Scheduler> make_hyperband_scheduler(const SweepConfig& sweep) {
    return std::make_unique<HyperBandScheduler>(sweep);
}

}  // namespace trainrt::tune
