#include "runtime/checkpoint_interval.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "config/settings.hpp"

namespace trainrt::runtime {

double young_daly_interval(double cost_s, double mtbf_s) { return std::sqrt(2.0 * cost_s * mtbf_s); }

double expected_waste(double interval_s, double cost_s, double mtbf_s) {
    return cost_s / interval_s + interval_s / (2.0 * mtbf_s);
}

Mtbf job_mtbf(double configured_s, int nodes, int failures_seen, double seconds_seen) {
    if (configured_s > 0) return {configured_s, FailureSettings::mtbf_key()};
    const double fallback = kNodeMtbfSeconds / std::max(nodes, 1);
    if (failures_seen <= 0) return {fallback, fmt::format("30 days / {} node(s): {} = 0", std::max(nodes, 1), FailureSettings::mtbf_key())};
    const double seen = std::max(seconds_seen, 0.0);
    return {(seen + fallback) / (failures_seen + 1),
            fmt::format("the run's record: {} failure(s) in {:.6g} s, and 30 days / {} node(s) as one more "
                        "({} = 0)",
                        failures_seen, seen, std::max(nodes, 1), FailureSettings::mtbf_key())};
}

CheckpointInterval::CheckpointInterval(std::optional<double> interval_s, double mtbf_s, std::string mtbf_source)
    : automatic_(!interval_s), fixed_s_(interval_s.value_or(0)), mtbf_s_(mtbf_s), mtbf_source_(std::move(mtbf_source)) {}

void CheckpointInterval::recall_costs(const std::vector<double>& stalls_s) {
    for (double stall : stalls_s) {
        costs_.push_back(stall);
        if (costs_.size() > kCostWindow) costs_.pop_front();
    }
}

void CheckpointInterval::recall_mtbf(Mtbf mtbf) {
    mtbf_s_ = mtbf.seconds;
    mtbf_source_ = std::move(mtbf.source);
}

void CheckpointInterval::start(double now) {
    if (!last_) last_ = now;
}

void CheckpointInterval::record_checkpoint(double now, double cost_s) {
    last_ = now;
    costs_.push_back(cost_s);
    if (costs_.size() > kCostWindow) costs_.pop_front();
}

std::optional<double> CheckpointInterval::cost() const {
    if (costs_.empty()) return std::nullopt;
    return *std::max_element(costs_.begin(), costs_.end());
}

std::optional<double> CheckpointInterval::interval() const {
    if (!automatic_) return fixed_s_;
    if (const auto c = cost()) return young_daly_interval(std::max(*c, 1e-6), mtbf_s_);
    return std::nullopt;
}

bool CheckpointInterval::due(double now) const {
    if (off() || !last_) return false;
    const std::optional<double> every = interval();
    return !every || now - *last_ >= *every;
}

std::string CheckpointInterval::describe() const {
    if (off()) return "checkpoint.interval: off";
    const std::optional<double> every = interval();
    if (!automatic_) return fmt::format("checkpoint.interval: a checkpoint {:.1f} s after the last one", *every);
    if (!every)
        return fmt::format("checkpoint.interval auto: MTBF {:.6g} s ({}); no checkpoint cost known yet: one at "
                           "the first step boundary measures it", mtbf_s_, mtbf_source_);
    return fmt::format("checkpoint.interval auto: a checkpoint every {:.6g} s = sqrt(2 x C {:.6g} s x MTBF {:.6g} s "
                       "({})); expected waste {:.2f}% (checkpoint stalls and work redone after failures)",
                       *every, *cost(), mtbf_s_, mtbf_source_, 100.0 * expected_waste(*every, *cost(), mtbf_s_));
}

}  // namespace trainrt::runtime
