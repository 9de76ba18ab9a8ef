#include "tune/hyperband.hpp"

#include <algorithm>
#include <cmath>

namespace trainrt::tune {
namespace {

// Ray's formulas, in its floating-point order (s_max / (s + 1) is a real division).
std::int64_t first_milestone(const HyperBandShape& shape, int s) {
    return static_cast<std::int64_t>(static_cast<double>(shape.max_t) * std::pow(shape.eta, -s));
}

std::size_t first_size(const HyperBandShape& shape, int s) {
    const double per_bracket = static_cast<double>(hyperband_brackets_per_band(shape)) / (s + 1);
    return static_cast<std::size_t>(std::ceil(per_bracket * std::pow(shape.eta, s)));
}

}  // namespace

int hyperband_brackets_per_band(const HyperBandShape& shape) {
    // numpy's round: half to even, as nearbyint in the default rounding mode
    return static_cast<int>(std::nearbyint(std::log(static_cast<double>(shape.max_t)) / std::log(shape.eta))) + 1;
}

BracketPlace hyperband_bracket(const HyperBandShape& shape, std::size_t index) {
    const int per_band = hyperband_brackets_per_band(shape);
    std::size_t bracket = 0, first = 0;  // `first`: the first trial of bracket `bracket`
    for (int s = 0;; s = (s + 1) % per_band) {
        if (first_milestone(shape, s) == 0) continue;  // too small: Ray skips it
        const std::size_t size = first_size(shape, s);
        if (index < first + size) return {bracket, s};
        first += size, ++bracket;
    }
}

std::vector<std::int64_t> hyperband_milestones(const HyperBandShape& shape, int s) {
    std::vector<std::int64_t> milestones{first_milestone(shape, s)};
    for (int k = 0; k < s; ++k) {
        const double next = std::min(static_cast<double>(milestones.back()) * shape.eta, static_cast<double>(shape.max_t));
        milestones.push_back(static_cast<std::int64_t>(next));
    }
    return milestones;
}

std::vector<std::size_t> hyperband_sizes(const HyperBandShape& shape, int s) {
    std::vector<std::size_t> sizes{first_size(shape, s)};
    for (int k = 0; k < s; ++k)
        sizes.push_back(static_cast<std::size_t>(std::ceil(static_cast<double>(sizes.back()) / shape.eta)));
    return sizes;
}

std::vector<std::size_t> hyperband_keep(std::vector<TrialScore> scores, std::size_t keep, bool maximize) {
    const double sign = maximize ? 1.0 : -1.0;
    std::stable_sort(scores.begin(), scores.end(),
                     [sign](const TrialScore& a, const TrialScore& b) { return sign * a.value < sign * b.value; });
    std::vector<std::size_t> kept;
    for (std::size_t i = scores.size() > keep ? scores.size() - keep : 0; i < scores.size(); ++i)
        kept.push_back(scores[i].trial);
    std::sort(kept.begin(), kept.end());
    return kept;
}

}  // namespace trainrt::tune
