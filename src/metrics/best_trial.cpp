#include "metrics/best_trial.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::metrics {
namespace {

const std::pair<const char*, Scope> kScopeNames[] = {{"last", Scope::last},
                                                     {"avg", Scope::avg},
                                                     {"last-5-avg", Scope::last_5_avg},
                                                     {"last-10-avg", Scope::last_10_avg},
                                                     {"all", Scope::all}};

double mean_of_last(const std::vector<MetricPoint>& series, std::size_t count) {
    const std::size_t first = series.size() - std::min(count, series.size());
    double sum = 0;
    for (std::size_t i = first; i < series.size(); ++i) sum += series[i].value;
    return sum / static_cast<double>(series.size() - first);
}

}  // namespace

Scope scope_named(const std::string& name) {
    for (const auto& [text, scope] : kScopeNames)
        if (name == text) return scope;
    throw ConfigError(fmt::format("scope '{}' is not one of last, avg, last-5-avg, last-10-avg, all", name));
}

std::optional<double> trial_score(const std::vector<MetricPoint>& series, bool maximize, Scope scope) {
    if (series.empty()) return std::nullopt;
    switch (scope) {
    case Scope::last: return series.back().value;
    case Scope::avg: return mean_of_last(series, series.size());
    case Scope::last_5_avg: return mean_of_last(series, 5);
    case Scope::last_10_avg: return mean_of_last(series, 10);
    case Scope::all: return best_value(series, maximize);
    }
    return std::nullopt;
}

std::optional<BestTrial> best_trial(const std::string& sweep_dir, const runlog::SweepState& state,
                                    const std::string& metric, const std::string& mode, Scope scope) {
    if (mode != "max" && mode != "min")
        throw ConfigError(fmt::format("mode '{}' is neither max nor min", mode));
    const bool maximize = mode == "max";
    std::optional<BestTrial> best;
    for (std::size_t i = 0; i < state.trials.size(); ++i) {
        const auto score = trial_score(metric_series(sweep_dir + "/" + state.trials[i].name, metric), maximize, scope);
        if (score && (!best || (maximize ? *score > best->score : *score < best->score))) best = BestTrial{i, *score};
    }
    return best;
}

}  // namespace trainrt::metrics
