#include "runtime/stop_criteria.hpp"

#include <sstream>
#include <variant>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::runtime {
namespace {

std::string trimmed(const std::string& text) {
    const auto first = text.find_first_not_of(" \t");
    return first == std::string::npos ? "" : text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::optional<double> value_of(const std::string& metric, const Metrics& row, std::int64_t iteration, double total_s) {
    if (metric == "training_iteration") return static_cast<double>(iteration);
    if (metric == "time_total_s") return total_s;
    for (const auto& [key, value] : row.items()) {
        if (key != metric) continue;
        if (const double* real = std::get_if<double>(&value)) return *real;
        if (const std::int64_t* whole = std::get_if<std::int64_t>(&value)) return static_cast<double>(*whole);
    }
    return std::nullopt;
}

}  // namespace

std::vector<StopCriterion> stop_criteria(const StopSettings& settings) {
    std::vector<StopCriterion> criteria;
    std::stringstream list(settings.criteria.value);
    for (std::string item; std::getline(list, item, ',');) {
        const auto at = item.find(">=");
        const std::string metric = trimmed(item.substr(0, at == std::string::npos ? 0 : at));
        const std::string number = at == std::string::npos ? "" : trimmed(item.substr(at + 2));
        std::size_t used = 0;
        double threshold = 0;
        try {
            threshold = std::stod(number, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (metric.empty() || used == 0 || used != number.size())
            throw ConfigError(fmt::format("config: {}: '{}' is not METRIC>=NUMBER (e.g. {} = accuracy>=0.9,"
                                          "training_iteration>=20)", settings.criteria.key, trimmed(item),
                                          settings.criteria.key));
        criteria.push_back({metric, threshold});
    }
    return criteria;
}

std::optional<std::string> criterion_met(const std::vector<StopCriterion>& criteria, const Metrics& row,
                                         std::int64_t training_iteration, double time_total_s) {
    for (const StopCriterion& criterion : criteria) {
        const std::optional<double> value = value_of(criterion.metric, row, training_iteration, time_total_s);
        if (value && *value >= criterion.threshold)
            return fmt::format("{} = {:g} >= {:g}", criterion.metric, *value, criterion.threshold);
    }
    return std::nullopt;
}

}  // namespace trainrt::runtime
