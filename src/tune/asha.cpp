#include "tune/asha.hpp"

#include <algorithm>
#include <cmath>

namespace trainrt::tune {

std::vector<std::int64_t> asha_rungs(const AshaKeys& asha) {
    std::vector<std::int64_t> rungs;
    const std::int64_t max_t = asha.max_t.value;
    for (double t = static_cast<double>(asha.grace_period.value); t < static_cast<double>(max_t);
         t *= asha.reduction_factor.value) {
        const auto rung = static_cast<std::int64_t>(std::llround(t));
        if (rungs.empty() || rung > rungs.back()) rungs.push_back(rung);
    }
    rungs.push_back(max_t);
    return rungs;
}

std::int64_t next_rung(const std::vector<std::int64_t>& rungs, std::int64_t rung) {
    const auto after = std::upper_bound(rungs.begin(), rungs.end(), rung);
    return after == rungs.end() ? 0 : *after;
}

double asha_cutoff(std::vector<double> values, double reduction_factor, bool maximize) {
    std::sort(values.begin(), values.end());
    const double fraction = maximize ? 1.0 - 1.0 / reduction_factor : 1.0 / reduction_factor;
    const double at = fraction * static_cast<double>(values.size() - 1);
    const auto low = static_cast<std::size_t>(std::floor(at));
    const std::size_t high = std::min(low + 1, values.size() - 1);
    return values[low] + (values[high] - values[low]) * (at - static_cast<double>(low));
}

bool asha_promotes(double value, double cutoff, bool maximize) { return maximize ? value >= cutoff : value <= cutoff; }

std::int64_t rung_at(const std::vector<std::int64_t>& rungs, std::int64_t target, double t) {
    std::int64_t reached = 0;
    for (const std::int64_t rung : rungs)
        if (rung >= target && static_cast<double>(rung) <= t + 1e-9) reached = rung;
    return reached;
}

std::string rungs_from(const std::vector<std::int64_t>& rungs, std::int64_t target) {
    std::string text;
    for (const std::int64_t rung : rungs)
        if (rung >= target) {
            if (!text.empty()) text += ',';
            text += std::to_string(rung);
        }
    return text;
}

}  // namespace trainrt::tune
