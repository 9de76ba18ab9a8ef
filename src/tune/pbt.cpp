#include "tune/pbt.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "trainrt/error.hpp"

namespace trainrt::tune {
namespace {

double unit(std::mt19937_64& generator) { return static_cast<double>(generator() >> 11) * 0x1.0p-53; }

double within(const Domain& domain, double value) {
    switch (domain.kind) {
        case DomainKind::uniform: case DomainKind::quniform: case DomainKind::loguniform:
            value = std::clamp(value, domain.low, domain.high);
            break;
        case DomainKind::randint: value = std::clamp(value, domain.low, domain.high - 1); break;
        case DomainKind::qrandint: value = std::clamp(value, domain.low, domain.high); break;
        default: break;
    }
    if (domain.q > 0) value = std::clamp(std::round(value / domain.q) * domain.q, domain.low, domain.high);
    return value;
}

// A function's value as Ray perturbs it: a number times 1.2 or 0.8 (an integer truncated back to
// one), unbounded; anything else drawn anew.
std::string perturbed_drawn(const Domain& domain, const std::string& value, bool up, std::mt19937_64& generator) {
    const double factor = up ? 1.2 : 0.8;
    std::size_t used = 0;
    try {
        if (value.find_first_of(".eEn") == std::string::npos) {
            const long long whole = std::stoll(value, &used);
            if (used == value.size()) return std::to_string(static_cast<long long>(static_cast<double>(whole) * factor));
        }
        const double real = std::stod(value, &used);
        if (used == value.size()) return real_text(real * factor);
    } catch (const std::logic_error&) {  // not a number: drawn below
    }
    return domain.sample(generator);
}

std::string perturbed(const Domain& domain, const std::string& value, std::mt19937_64& generator) {
    const bool up = generator() % 2 == 1;
    if (domain.kind == DomainKind::function) return perturbed_drawn(domain, value, up, generator);
    if (domain.enumerated()) {
        auto at = std::find(domain.values.begin(), domain.values.end(), value);
        if (at == domain.values.end())  // not one of the choice's values (a base job's own): drawn, as Ray's
            return domain.kind == DomainKind::choice ? domain.sample(generator) : value;
        const auto index = static_cast<std::size_t>(at - domain.values.begin());
        if (up) return domain.values[std::min(index + 1, domain.values.size() - 1)];
        return domain.values[index == 0 ? 0 : index - 1];
    }
    const double moved = within(domain, std::stod(value) * (up ? 1.2 : 0.8));
    return domain.integral() ? std::to_string(static_cast<std::int64_t>(std::llround(moved))) : real_text(moved);
}

}  // namespace

std::vector<std::int64_t> pbt_boundaries(std::int64_t interval, std::int64_t total) {
    std::vector<std::int64_t> boundaries;
    for (std::int64_t epoch = interval; epoch < total; epoch += interval) boundaries.push_back(epoch);
    boundaries.push_back(total);
    return boundaries;
}

std::int64_t pbt_next_boundary(const std::vector<std::int64_t>& boundaries, std::int64_t time) {
    for (std::int64_t boundary : boundaries)
        if (boundary > time) return boundary;
    return 0;
}

std::optional<std::int64_t> pbt_iteration_end(const std::vector<runtime::StopCriterion>& criteria) {
    std::optional<std::int64_t> end;
    for (const runtime::StopCriterion& criterion : criteria) {
        if (criterion.metric != "training_iteration") continue;
        const auto at = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(criterion.threshold)));
        end = end ? std::min(*end, at) : at;
    }
    return end;
}

std::vector<PbtScore> pbt_scores_at(const std::vector<runlog::TrialRecord>& trials, std::size_t trial,
                                    double value, std::int64_t time) {
    std::vector<PbtScore> scores{{trial, value}};
    for (const runlog::TrialRecord& other : trials) {
        if (other.index == trial) continue;
        const auto latest = std::find_if(other.decisions.rbegin(), other.decisions.rend(),
                                         [time](const runlog::RungDecision& d) { return d.rung <= time; });
        if (latest != other.decisions.rend()) scores.push_back({other.index, latest->value});
    }
    return scores;
}

PbtQuantiles pbt_quantiles(std::vector<PbtScore> scores, double fraction, bool maximize) {
    PbtQuantiles split;
    if (scores.size() < 2) return split;
    std::stable_sort(scores.begin(), scores.end(), [maximize](const PbtScore& a, const PbtScore& b) {
        return maximize ? a.value < b.value : a.value > b.value;  // worst first
    });
    auto count = static_cast<std::size_t>(std::ceil(static_cast<double>(scores.size()) * fraction));
    count = std::min(count, scores.size() / 2);
    for (std::size_t i = 0; i < count; ++i) {
        split.lower.push_back(scores[i].trial);
        split.upper.push_back(scores[scores.size() - 1 - i].trial);
    }
    return split;
}

std::uint64_t pbt_draw_seed(std::uint64_t seed, std::size_t trial, std::int64_t boundary) {
    std::seed_seq seeds{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                        static_cast<std::uint32_t>(trial), static_cast<std::uint32_t>(boundary), 0x50425431u};
    std::mt19937_64 generator(seeds);
    return generator();
}

std::size_t pbt_pick_donor(const std::vector<std::size_t>& upper, std::uint64_t draw_seed) {
    if (upper.empty()) throw Error("tune: PBT has no trial to copy");
    std::mt19937_64 generator(draw_seed);
    return upper[generator() % upper.size()];
}

TrialValues pbt_explore(const std::vector<Domain>& space, const TrialValues& donor_values,
                        double resample_probability, std::uint64_t draw_seed) {
    std::mt19937_64 generator(draw_seed ^ 0x9e3779b97f4a7c15ULL);
    TrialValues explored = donor_values;
    for (auto& [key, value] : explored) {
        auto domain = std::find_if(space.begin(), space.end(), [&key = key](const Domain& d) { return d.key == key; });
        if (domain == space.end()) continue;
        const bool resample = unit(generator) < resample_probability && domain->kind != DomainKind::grid;
        value = resample ? domain->sample(generator) : perturbed(*domain, value, generator);
    }
    return explored;
}

}  // namespace trainrt::tune
