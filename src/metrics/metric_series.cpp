#include "metrics/metric_series.hpp"

#include <filesystem>

#include "metrics/rows_file.hpp"
#include "runlog/run_files.hpp"

namespace trainrt::metrics {
std::vector<MetricPoint> metric_series(const std::string& run_dir, const std::string& metric) {
    std::vector<MetricPoint> series;
    const std::string path = runlog::path_in(run_dir, runlog::kResults);
    if (!std::filesystem::exists(path)) return series;
    for (const Row& row : read_rows(path).rows)
        if (const auto value = number_in(row, metric))
            series.push_back({number_in(row, "epoch"), number_in(row, "_training_iteration"), *value});
    return series;
}

std::optional<double> last_value(const std::vector<MetricPoint>& series) {
    return series.empty() ? std::nullopt : std::optional(series.back().value);
}

std::optional<double> value_at_epoch(const std::vector<MetricPoint>& series, std::int64_t epoch) {
    std::optional<double> found;
    for (const MetricPoint& point : series)
        if (point.epoch && static_cast<std::int64_t>(*point.epoch) == epoch) found = point.value;
    return found;
}

std::optional<double> best_value(const std::vector<MetricPoint>& series, bool maximize) {
    std::optional<double> best;
    for (const MetricPoint& point : series)
        if (!best || (maximize ? point.value > *best : point.value < *best)) best = point.value;
    return best;
}

}  // namespace trainrt::metrics
