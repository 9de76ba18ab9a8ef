// Schedulers that decide at rungs while a trial runs (ASHA, asha.hpp; the median stopping rule,
// median_stopping.hpp): a trial runs in one step through the rungs it is let go on at, waiting at
// each for the verdict this scheduler writes into its run directory. The rule decides a rung.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "log/log.hpp"
#include "metrics/metric_series.hpp"
#include "runlog/run_files.hpp"
#include "storage/posix.hpp"
#include "runtime/stop_criteria.hpp"
#include "tune/asha.hpp"
#include "tune/median_stopping.hpp"
#include "tune/scheduler.hpp"

namespace trainrt::tune {
namespace {

using runlog::RungDecision;
using runlog::TrialRecord;

// A rule's decision at a rung: go on (or stop there), the value it compared with, how many values.
struct RungVerdict {
    bool go_on = false;
    double cutoff = 0;
    std::size_t seen = 0;
};

// The rung (its time), the trial's metric there; the sweep's trials as they are.
using RungRule = std::function<RungVerdict(const SchedulerContext&, const TrialRecord&, std::int64_t, double)>;

struct RungPlan {
    std::string name;                 // "asha": its definition key tune.<name>.rungs
    std::string time_attr;            // epoch or training_iteration
    std::vector<std::int64_t> rungs;
    std::int64_t epochs = 0;          // by epoch, > 0: each step's train.epochs
    RungRule rule;
};

class RungScheduler final : public Scheduler {
public:
    RungScheduler(const SweepConfig& sweep, RungPlan plan) : sweep_(sweep), plan_(std::move(plan)), rungs_(plan_.rungs) {}

    void add_definition(std::map<std::string, std::string>& definition) const override {
        for (const std::int64_t rung : rungs_) definition["tune." + plan_.name + ".rungs"] += fmt::format("{} ", rung);
        if (plan_.time_attr != "epoch") definition["tune." + plan_.name + ".time_attr"] = plan_.time_attr;
    }

    std::int64_t first_target(std::size_t) const override { return rungs_.front(); }

    // The rungs left to decide as pause points (the trial waits at each for the sweep's verdict)
    // and, counting epochs, train.epochs = max_t.
    std::vector<std::string> step_args(const TrialRecord& trial) const override {
        std::vector<std::string> args{"--stop.pause_by=" + plan_.time_attr,
                                      "--stop.pause_at=" + rungs_from(rungs_, trial.target),
                                      "--stop.pause_metric=" + sweep_.tune.metric.value};
        if (plan_.epochs > 0) args.push_back(fmt::format("--train.epochs={}", plan_.epochs));
        return args;
    }

    // An earlier attempt's rows may have decided the trial's last rung: it is done.
    bool ended_before_start(SchedulerContext& context, TrialRecord& trial) override {
        return decide_rows(context, trial) && trial.target == 0;
    }

    // The rows new in the trial's result.jsonl (its size changed since the step's last look)
    // decide its rungs.
    void watch_running(SchedulerContext& context, TrialRecord& trial) override {
        RowsSeen& seen = rows_seen_[trial.index];
        if (seen.attempt != trial.attempts) seen = {trial.attempts, 0};  // a new step: read its rows anew
        std::error_code error;
        const auto bytes = std::filesystem::file_size(runlog::path_in(context.dir + "/" + trial.name, runlog::kResults), error);
        if (error || bytes == seen.bytes) return;
        seen.bytes = bytes;
        decide_rows(context, trial);  // each decision saves the state before its verdict
    }

    // Every end: the step's last rows decide first; a step that ended done, and any step once the
    // trial has no rung left to decide (target 0), leaves the trial TERMINATED.
    bool step_ended(SchedulerContext& context, TrialRecord& trial, TrialEnd end) override {
        decide_rows(context, trial);
        if (end != TrialEnd::done && trial.target != 0) return false;
        rungs_ended(trial, end);
        return true;
    }

private:
    struct RowsSeen {
        int attempt = 0;            // the step's (TrialRecord::attempts when it started)
        std::uintmax_t bytes = 0;   // its result.jsonl's size when last read
    };

    bool decide_rows(SchedulerContext& context, TrialRecord& trial);
    void decide(SchedulerContext& context, TrialRecord& trial, std::int64_t rung, double value);
    void write_verdict(const SchedulerContext& context, const TrialRecord& trial, std::int64_t rung, bool go_on) const;
    void rungs_ended(TrialRecord& trial, TrialEnd end) const;

    const SweepConfig& sweep_;
    RungPlan plan_;
    const std::vector<std::int64_t>& rungs_;
    std::map<std::size_t, RowsSeen> rows_seen_;  // by trial index
};

// Decides every rung the trial's rows reached and writes each verdict where its step waits for
// it (runlog::decision_path); true when it decided any. Rows without the metric (a built-in
// workload's mid-epoch stop row) decide nothing, as in Ray, and its step does not wait at them.
bool RungScheduler::decide_rows(SchedulerContext& context, TrialRecord& trial) {
    const bool by_epoch = plan_.time_attr == "epoch";
    bool decided = false;
    for (const metrics::MetricPoint& row : metrics::metric_series(context.dir + "/" + trial.name, sweep_.tune.metric.value)) {
        const std::optional<double> t = by_epoch ? row.epoch : row.iteration;
        const std::int64_t rung = trial.target == 0 || !t ? 0 : rung_at(rungs_, trial.target, *t);
        if (rung == 0) continue;
        decided = true;
        decide(context, trial, rung, row.value);
    }
    return decided;
}

// The rule at `rung` with the trial's `value` there: continue to the next rung, or stop here.
void RungScheduler::decide(SchedulerContext& context, TrialRecord& trial, std::int64_t rung, double value) {
    const RungVerdict verdict = plan_.rule(context, trial, rung, value);
    const std::int64_t next = next_rung(rungs_, rung);
    const bool promoted = next != 0 && verdict.go_on;
    trial.decisions.push_back({rung, value, verdict.cutoff, verdict.seen, promoted});
    trial.target = promoted ? next : 0;
    context.save();  // before the verdict: a restarted sweep never decides a rung twice
    write_verdict(context, trial, rung, promoted);
    log::info("sweep: {} at {} {}: {} = {:.6g}, {} {:.6g} of {} trial(s): {}", trial.name, plan_.time_attr, rung,
              sweep_.tune.metric.value, value, plan_.name == "asha" ? "cutoff" : "median", verdict.cutoff, verdict.seen,
              promoted ? fmt::format("continues to {}", next) : next == 0 ? "done" : "stopped early");
}

void RungScheduler::write_verdict(const SchedulerContext& context, const TrialRecord& trial, std::int64_t rung,
                                  bool go_on) const {
    const std::string path = runlog::decision_path(context.dir + "/" + trial.name, rung);
    storage::make_dirs(std::filesystem::path(path).parent_path().string());
    storage::write_file_atomic(path, std::string(go_on ? runlog::kVerdictContinue : runlog::kVerdictStop) + "\n");
}

// A trial's step ended with every rung decided, or 0 before its next rung (its function
// returned: TERMINATED with what it reported, as Ray's).
void RungScheduler::rungs_ended(TrialRecord& trial, TrialEnd end) const {
    trial.status = runlog::TrialStatus::terminated;
    if (end == TrialEnd::done && trial.target != 0)
        log::info("sweep: {} returned before {} {}: TERMINATED with what it reported", trial.name, plan_.time_attr,
                  trial.target);
}

// ASHA's rule: go on when the value is not worse than the cutoff of every trial's value at the rung.
RungVerdict asha_rule(const SweepConfig& sweep, const SchedulerContext& context, const TrialRecord& trial,
                      std::int64_t rung, double value) {
    const bool maximize = sweep.tune.mode.value == ScoreOrder::max;
    std::vector<double> at_rung{value};
    for (const TrialRecord& other : context.state.trials)
        for (const RungDecision& decision : other.decisions)
            if (decision.rung == rung && other.index != trial.index) at_rung.push_back(decision.value);
    const double cutoff = asha_cutoff(at_rung, sweep.asha.reduction_factor.value, maximize);
    return {asha_promotes(value, cutoff, maximize), cutoff, at_rung.size()};
}

// The median stopping rule: the trial's own rows and every other trial's, as their files hold them now.
RungVerdict median_rule(const SweepConfig& sweep, const SchedulerContext& context, const TrialRecord& trial,
                        std::int64_t rung) {
    const bool by_epoch = sweep.median.time_attr.value == "epoch";
    const auto timed = [&](const TrialRecord& of) {
        std::vector<TimedValue> series;
        for (const metrics::MetricPoint& row : metrics::metric_series(context.dir + "/" + of.name, sweep.tune.metric.value))
            if (const std::optional<double> t = by_epoch ? row.epoch : row.iteration) series.push_back({*t, row.value});
        return series;
    };
    std::vector<std::vector<TimedValue>> others;
    for (const TrialRecord& other : context.state.trials)
        if (other.index != trial.index && other.attempts > 0) others.push_back(timed(other));
    const MedianVerdict verdict = median_verdict(timed(trial), others, static_cast<double>(rung),
                                                 sweep.median.grace_period.value,
                                                 static_cast<std::size_t>(sweep.median.min_samples_required.value),
                                                 sweep.tune.mode.value == ScoreOrder::max);
    return {!verdict.stop, verdict.median, verdict.samples};
}

}  // namespace

std::unique_ptr<Scheduler> make_asha_scheduler(const SweepConfig& sweep) {
    const bool by_epoch = sweep.asha.time_attr.value == "epoch";
    RungPlan plan{"asha", sweep.asha.time_attr.value, asha_rungs(sweep.asha), by_epoch ? sweep.asha.max_t.value : 0,
                  [&sweep](const SchedulerContext& c, const TrialRecord& t, std::int64_t rung, double value) {
                      return asha_rule(sweep, c, t, rung, value);
                  }};
    return std::make_unique<RungScheduler>(sweep, std::move(plan));
}

std::unique_ptr<Scheduler> make_median_scheduler(const SweepConfig& sweep) {
    RungPlan plan{"median", sweep.median.time_attr.value, median_points(sweep), 0,
                  [&sweep](const SchedulerContext& c, const TrialRecord& t, std::int64_t rung, double) {
                      return median_rule(sweep, c, t, rung);
                  }};
    return std::make_unique<RungScheduler>(sweep, std::move(plan));
}

}  // namespace trainrt::tune
