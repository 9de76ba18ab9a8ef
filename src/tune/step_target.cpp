#include "tune/step_target.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "metrics/rows_file.hpp"
#include "runlog/run_files.hpp"
#include "storage/posix.hpp"
#include "trainrt/metrics.hpp"

namespace trainrt::tune {

std::vector<std::string> step_to_target_args(bool by_iteration, std::int64_t target, const std::string& metric) {
    if (!by_iteration) return {fmt::format("--train.epochs={}", target)};
    return {"--stop.pause_by=training_iteration", fmt::format("--stop.pause_at={}", target), "--stop.pause_metric=" + metric};
}

void stop_at_target(const std::string& run_dir, std::int64_t target) {
    const std::string path = runlog::decision_path(run_dir, target);
    if (std::filesystem::exists(path)) return;
    storage::make_dirs(std::filesystem::path(path).parent_path().string());
    storage::write_file_atomic(path, std::string(runlog::kVerdictStop) + "\n");
}

std::optional<StepPoint> step_point(const std::vector<metrics::MetricPoint>& series, std::int64_t target,
                                    bool by_iteration) {
    std::optional<StepPoint> found;
    for (const metrics::MetricPoint& row : series) {
        const std::optional<double> time = by_iteration ? row.iteration : row.epoch;
        if (!time) continue;
        const auto at = static_cast<std::int64_t>(*time);  // as value_at_epoch reads an epoch
        if (by_iteration && at >= target) return StepPoint{at, row.value};
        if (!by_iteration && at == target) found = StepPoint{at, row.value};
    }
    return found;
}

bool met_own_criteria(const std::vector<runtime::StopCriterion>& criteria, const std::string& run_dir) {
    if (criteria.empty()) return false;
    const std::vector<metrics::Row> rows = metrics::read_rows(runlog::path_in(run_dir, runlog::kResults)).rows;
    if (rows.empty()) return false;
    Metrics last;
    for (const auto& [key, value] : rows.back().items())
        if (value.is_number()) last.set(key, value.get<double>());
    const auto iteration = static_cast<std::int64_t>(metrics::number_in(rows.back(), "_training_iteration").value_or(0));
    const double seconds = metrics::number_in(rows.back(), "_time_total_s").value_or(0);
    return runtime::criterion_met(criteria, last, iteration, seconds).has_value();
}

}  // namespace trainrt::tune
