#include "tune/median_stopping.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "runtime/stop_criteria.hpp"
#include "trainrt/error.hpp"
#include "tune/pbt.hpp"

namespace trainrt::tune {
namespace {

// The mean of `rows` from grace_period up to `time`; nullopt when none is there.
std::optional<double> running_mean(const std::vector<TimedValue>& rows, double time, double grace_period) {
    double sum = 0;
    std::size_t count = 0;
    for (const TimedValue& row : rows)
        if (row.time >= grace_period && row.time <= time) sum += row.value, ++count;
    if (count == 0) return std::nullopt;
    return sum / static_cast<double>(count);
}

double median_of(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t middle = values.size() / 2;
    return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

}  // namespace

MedianVerdict median_verdict(const std::vector<TimedValue>& own, const std::vector<std::vector<TimedValue>>& others,
                             double time, double grace_period, std::size_t min_samples_required, bool maximize) {
    if (own.empty() || time < grace_period) return {};
    std::vector<double> means;
    for (const std::vector<TimedValue>& rows : others) {
        if (rows.empty() || rows.back().time < time) continue;  // not beyond `time` yet
        if (const std::optional<double> mean = running_mean(rows, time, grace_period); mean && std::isfinite(*mean))
            means.push_back(*mean);
    }
    if (means.size() < min_samples_required) return {false, 0, means.size()};
    const double median = median_of(means);
    double best = own.front().value;
    for (const TimedValue& row : own) best = maximize ? std::max(best, row.value) : std::min(best, row.value);
    return {maximize ? median > best : median < best, median, means.size()};
}

std::vector<std::int64_t> median_points(const SweepConfig& sweep) {
    std::optional<std::int64_t> end;
    if (sweep.median.time_attr.value == "training_iteration")
        end = pbt_iteration_end(runtime::stop_criteria(StopSettings::read(sweep.base)));
    else if (const std::string epochs = sweep.base.get_or(kTrainEpochsKey, ""); !epochs.empty())
        end = std::stoll(epochs);
    if (!end)
        throw ConfigError(fmt::format(
            "tune: scheduler = median_stopping decides at each report up to each trial's end, which {} does not set: "
            "{}", sweep.base_path, sweep.median.time_attr.value == "epoch"
                                       ? "set train.epochs there"
                                       : "set [stop] criteria = training_iteration>=N there (Ray's RunConfig(stop="
                                         "{\"training_iteration\": N}))"));
    const auto first = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(sweep.median.grace_period.value)));
    std::vector<std::int64_t> points;
    for (std::int64_t t = first; t <= *end; ++t) points.push_back(t);
    if (points.empty()) points.push_back(*end);
    return points;
}

}  // namespace trainrt::tune
