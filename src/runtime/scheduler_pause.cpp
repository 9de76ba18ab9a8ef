#include "runtime/scheduler_pause.hpp"

#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "log/log.hpp"
#include "runlog/run_files.hpp"
#include "runtime/stop_signals.hpp"
#include "trainrt/error.hpp"

namespace trainrt::runtime {
namespace {

// How often rank 0 looks for the verdict (the sweep looks at rows every 50 ms), how long it waits
// once a stop signal came, and after how long it says it is still waiting.
constexpr auto kPollInterval = std::chrono::milliseconds(10);
constexpr double kSignalWaitS = 5;
constexpr double kSayWaitingS = 60;

std::optional<double> number_in(const Metrics& row, const std::string& name) {
    for (const auto& [key, value] : row.items()) {
        if (key != name) continue;
        if (const double* real = std::get_if<double>(&value)) return *real;
        if (const std::int64_t* whole = std::get_if<std::int64_t>(&value)) return static_cast<double>(*whole);
    }
    return std::nullopt;
}

// The verdict file's word, or "" while it is absent.
std::string verdict_text(const std::string& path) {
    std::ifstream file(path);
    if (!file) return "";
    std::string word;
    file >> word;
    return word;
}

}  // namespace

std::vector<std::int64_t> pause_points(const StopSettings& settings) {
    std::vector<std::int64_t> points;
    std::stringstream list(settings.pause_at.value);
    for (std::string item; std::getline(list, item, ',');) {
        std::size_t used = 0;
        std::int64_t point = 0;
        try {
            point = std::stoll(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || item.find_first_not_of(" ", used) != std::string::npos || (!points.empty() && point <= points.back()))
            throw ConfigError(fmt::format("config: {}: '{}' is not a comma list of increasing integers (e.g. 1,3,9)",
                                          settings.pause_at.key, settings.pause_at.value));
        points.push_back(point);
    }
    if (!points.empty() && settings.pause_by.value.empty())
        throw ConfigError(fmt::format("config: {} = {} needs {} (epoch or training_iteration)", settings.pause_at.key,
                                      settings.pause_at.value, settings.pause_by.key));
    return points;
}

SchedulerPause::SchedulerPause(const StopSettings& settings, std::string run_dir)
    : by_(settings.pause_by.value), metric_(settings.pause_metric.value), points_(pause_points(settings)),
      run_dir_(std::move(run_dir)) {}

// The row's pause_by value; nullopt for a row without it or without pause_metric.
std::optional<double> SchedulerPause::value_of(const Metrics& row, std::int64_t iteration) const {
    const std::optional<double> value =
        by_ == "training_iteration" ? std::optional<double>(static_cast<double>(iteration)) : number_in(row, by_);
    if (!value || (!metric_.empty() && !number_in(row, metric_))) return std::nullopt;
    return value;
}

bool SchedulerPause::would_reach(const Metrics& row, std::int64_t iteration) const {
    const std::optional<double> value = value_of(row, iteration);
    return value && !points_.empty() && static_cast<double>(points_.front()) <= *value + 1e-9;
}

std::optional<std::int64_t> SchedulerPause::reached(const Metrics& row, std::int64_t iteration) {
    const std::optional<double> value = value_of(row, iteration);
    if (!value) return std::nullopt;
    std::optional<std::int64_t> point;
    while (!points_.empty() && static_cast<double>(points_.front()) <= *value + 1e-9) {
        point = points_.front();
        points_.erase(points_.begin());
    }
    return point;
}

Verdict SchedulerPause::await(std::int64_t point) const {
    const std::string path = runlog::decision_path(run_dir_, point);
    const double start = monotonic_seconds();
    bool said = false;
    for (;;) {
        const std::string word = verdict_text(path);
        if (word == runlog::kVerdictContinue) return Verdict::go_on;
        if (word == runlog::kVerdictStop) return Verdict::stop;
        if (!word.empty())
            throw StorageError(fmt::format("storage: {} says '{}': a sweep's verdict is {} or {}", path, word,
                                           runlog::kVerdictContinue, runlog::kVerdictStop));
        const double waited = monotonic_seconds() - start;
        if (stop_signal_received() != 0 && monotonic_seconds() - stop_signal_time() > kSignalWaitS) return Verdict::go_on;
        if (!said && waited > kSayWaitingS) {
            log::warn("still waiting for the sweep's verdict at {} {} ({}): is `trainrt tune` running?", by_, point, path);
            said = true;
        }
        std::this_thread::sleep_for(kPollInterval);
    }
}

}  // namespace trainrt::runtime
