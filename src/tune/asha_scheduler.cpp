// ASHA (asha.hpp) as the sweep's scheduler: a trial runs in one step through the rungs it is
// promoted at, waiting at each for the verdict this scheduler writes into its run directory.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "log/log.hpp"
#include "metrics/metric_series.hpp"
#include "runlog/run_files.hpp"
#include "storage/posix.hpp"
#include "tune/asha.hpp"
#include "tune/scheduler.hpp"

namespace trainrt::tune {
namespace {

using runlog::RungDecision;
using runlog::TrialRecord;

class AshaScheduler final : public Scheduler {
public:
    explicit AshaScheduler(const SweepConfig& sweep) : sweep_(sweep), rungs_(asha_rungs(sweep.asha)) {}

    void add_definition(std::map<std::string, std::string>& definition) const override {
        for (const std::int64_t rung : rungs_) definition["tune.asha.rungs"] += fmt::format("{} ", rung);
        if (sweep_.asha.time_attr.value != "epoch") definition[sweep_.asha.time_attr.key] = sweep_.asha.time_attr.value;
    }

    std::int64_t first_target(std::size_t) const override { return rungs_.front(); }

    // The rungs left to decide as pause points (the trial waits at each for the sweep's verdict)
    // and, counting epochs, train.epochs = max_t.
    std::vector<std::string> step_args(const TrialRecord& trial) const override {
        std::vector<std::string> args{"--stop.pause_by=" + sweep_.asha.time_attr.value,
                                      "--stop.pause_at=" + rungs_from(rungs_, trial.target),
                                      "--stop.pause_metric=" + sweep_.tune.metric.value};
        if (sweep_.asha.time_attr.value == "epoch") args.push_back(fmt::format("--train.epochs={}", sweep_.asha.max_t.value));
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
        asha_ended(trial, end);
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
    void asha_ended(TrialRecord& trial, TrialEnd end) const;

    const SweepConfig& sweep_;
    std::vector<std::int64_t> rungs_;
    std::map<std::size_t, RowsSeen> rows_seen_;  // by trial index
};

// Decides every rung the trial's rows reached and writes each verdict where its step waits for
// it (runlog::decision_path); true when it decided any. Rows without the metric (a built-in
// workload's mid-epoch stop row) decide nothing, as in Ray, and its step does not wait at them.
bool AshaScheduler::decide_rows(SchedulerContext& context, TrialRecord& trial) {
    const bool by_epoch = sweep_.asha.time_attr.value == "epoch";
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

// ASHA at `rung` with the trial's `value` there: continue to the next rung, or stop here.
void AshaScheduler::decide(SchedulerContext& context, TrialRecord& trial, std::int64_t rung, double value) {
    const bool maximize = sweep_.tune.mode.value == ScoreOrder::max;
    std::vector<double> at_rung{value};
    for (const TrialRecord& other : context.state.trials)
        for (const RungDecision& decision : other.decisions)
            if (decision.rung == rung && other.index != trial.index) at_rung.push_back(decision.value);
    const double cutoff = asha_cutoff(at_rung, sweep_.asha.reduction_factor.value, maximize);
    const std::int64_t next = next_rung(rungs_, rung);
    const bool promoted = next != 0 && asha_promotes(value, cutoff, maximize);
    trial.decisions.push_back({rung, value, cutoff, at_rung.size(), promoted});
    trial.target = promoted ? next : 0;
    context.save();  // before the verdict: a restarted sweep never decides a rung twice
    write_verdict(context, trial, rung, promoted);
    log::info("sweep: {} at {} {}: {} = {:.6g}, cutoff {:.6g} of {} trial(s): {}", trial.name,
              sweep_.asha.time_attr.value, rung, sweep_.tune.metric.value, value, cutoff, at_rung.size(),
              promoted ? fmt::format("continues to {}", next) : next == 0 ? "done" : "stopped early");
}

void AshaScheduler::write_verdict(const SchedulerContext& context, const TrialRecord& trial, std::int64_t rung,
                                  bool go_on) const {
    const std::string path = runlog::decision_path(context.dir + "/" + trial.name, rung);
    storage::make_dirs(std::filesystem::path(path).parent_path().string());
    storage::write_file_atomic(path, std::string(go_on ? runlog::kVerdictContinue : runlog::kVerdictStop) + "\n");
}

// An ASHA trial's step ended with every rung decided, or 0 before its next rung (its function
// returned: TERMINATED with what it reported, as Ray's).
void AshaScheduler::asha_ended(TrialRecord& trial, TrialEnd end) const {
    trial.status = runlog::TrialStatus::terminated;
    if (end == TrialEnd::done && trial.target != 0)
        log::info("sweep: {} returned before {} {}: TERMINATED with what it reported", trial.name,
                  sweep_.asha.time_attr.value, trial.target);
}

}  // namespace

std::unique_ptr<Scheduler> make_asha_scheduler(const SweepConfig& sweep) { return std::make_unique<AshaScheduler>(sweep); }

}  // namespace trainrt::tune
