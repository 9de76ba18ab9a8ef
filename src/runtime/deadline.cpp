#include "runtime/deadline.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace trainrt::runtime {
namespace {

constexpr double fixed_slack_s = 10.0;

void push_bounded(std::deque<double>& values, double value, std::size_t limit) {
    values.push_back(value);
    if (values.size() > limit) values.pop_front();
}

double slowest(const std::deque<double>& values) {
    return values.empty() ? 0.0 : *std::max_element(values.begin(), values.end());
}

}  // namespace

void DeadlinePolicy::record_step(double seconds) { push_bounded(steps_, seconds, window); }

void DeadlinePolicy::record_checkpoint(double seconds) { push_bounded(checkpoints_, seconds, 4); }

double DeadlinePolicy::margin() const {
    if (configured_margin_) return *configured_margin_;
    return fixed_slack_s + 2 * slowest(steps_) + 2 * slowest(checkpoints_);
}

std::string DeadlinePolicy::describe_margin() const {
    if (configured_margin_) return fmt::format("margin {:.1f} s ([stop] time_margin)", margin());
    return fmt::format("margin {:.1f} s (auto: {:.0f} s + 2 x slowest step {:.3f} s + 2 x slowest "
                       "checkpoint {:.3f} s)", margin(), fixed_slack_s, slowest(steps_),
                       slowest(checkpoints_));
}

}  // namespace trainrt::runtime
