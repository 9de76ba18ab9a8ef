#include "tune/native_search.hpp"

#include <random>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::tune {
namespace {

bool enumerated_by(const Domain& domain, SearchKind kind) {
    return domain.kind == DomainKind::grid || (kind == SearchKind::grid && domain.kind == DomainKind::choice);
}

std::string grid_shape(const std::vector<Domain>& space, SearchKind kind) {
    std::string shape;
    for (const Domain& domain : space)
        if (enumerated_by(domain, kind))
            shape += fmt::format("{}{} {}", shape.empty() ? "" : " x ", domain.key, domain.values.size());
    return shape;
}

// Why search `kind` cannot draw `domain` (empty: it can), the end of a ConfigError's line.
std::string refusal(const Domain& domain, SearchKind kind) {
    const DomainKind is = domain.kind;
    if (is == DomainKind::searched && kind != SearchKind::hyperopt)
        return "searched() is drawn by the space of search = hyperopt (tune.hyperopt.space); give a domain such as "
               "uniform(...) instead";
    if (kind == SearchKind::grid && !domain.enumerated())
        return "search = grid enumerates values and this domain has none; use grid(...) or choice(...), or search = random";
    if ((kind == SearchKind::optuna || kind == SearchKind::hyperopt) && is == DomainKind::grid)
        return fmt::format("search = {} samples every value; use choice(...) instead of grid(...)",
                           kind == SearchKind::optuna ? "optuna" : "hyperopt");
    if ((kind == SearchKind::optuna || kind == SearchKind::hyperopt) && is == DomainKind::function)
        return "the searcher samples every value itself and cannot call a function (a PopulationBasedTraining "
               "mutation); use a domain, or search = random";
    const bool bounded = is == DomainKind::uniform || is == DomainKind::loguniform || is == DomainKind::quniform;
    if (kind == SearchKind::bayesopt && !bounded)
        return "search = bayesopt searches continuous bounds; use uniform(...), or search = optuna or random";
    // Nevergrad's parameters and BOHB's ConfigSpace, as Ray converts Tune's domains to them
    const bool unstepped = is == DomainKind::choice || is == DomainKind::uniform || is == DomainKind::loguniform ||
                           is == DomainKind::randint;
    if ((kind == SearchKind::nevergrad || kind == SearchKind::bohb) && !unstepped)
        return fmt::format("search = {} takes choice, uniform, loguniform and randint domains (no steps, no normal "
                           "distribution); use one of them, or search = random",
                           kind == SearchKind::bohb ? "bohb" : "nevergrad");
    if (kind == SearchKind::optuna && is == DomainKind::randn)
        return "Optuna has no normal distribution; use uniform(...) or loguniform(...), or search = random";
    return "";
}

void check_domains(const std::vector<Domain>& space, SearchKind kind) {
    for (const Domain& domain : space) {
        const std::string why = refusal(domain, kind);
        if (!why.empty())
            throw ConfigError(fmt::format("tune: [space] {} = {} ({}): {}", domain.key, domain.text(), domain.source, why));
    }
}

}  // namespace

std::size_t grid_points(const std::vector<Domain>& space, SearchKind kind) {
    std::size_t points = 1;
    for (const Domain& domain : space)
        if (enumerated_by(domain, kind)) points *= domain.values.size();
    return points;
}

std::size_t trial_count(const std::vector<Domain>& space, SearchKind kind, std::int64_t num_samples,
                        const std::string& num_samples_source) {
    check_domains(space, kind);
    const std::size_t points = grid_points(space, kind);
    if (num_samples == 0) return points;
    const auto samples = static_cast<std::size_t>(num_samples);
    if (kind == SearchKind::grid && samples != points)
        throw ConfigError(fmt::format("tune: tune.num_samples = {} ({}) but the grid has {} points ({}); set "
                                      "num_samples = {} or 0", num_samples, num_samples_source, points,
                                      grid_shape(space, kind), points));
    if (kind == SearchKind::random && samples % points != 0)
        throw ConfigError(fmt::format("tune: tune.num_samples = {} ({}) is not a multiple of the grid's {} points "
                                      "({}): every point gets the same number of trials; use {} or {}",
                                      num_samples, num_samples_source, points, grid_shape(space, kind),
                                      samples / points * points == 0 ? points : samples / points * points,
                                      (samples / points + 1) * points));
    return samples;
}

TrialValues native_trial(const std::vector<Domain>& space, SearchKind kind, std::uint64_t seed, std::size_t index) {
    std::seed_seq seeds{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                        static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(std::uint64_t(index) >> 32)};
    std::mt19937_64 generator(seeds);
    std::size_t point = index % grid_points(space, kind);
    std::vector<std::size_t> grid_index(space.size(), 0);
    for (std::size_t d = space.size(); d-- > 0;) {  // the last enumerated key varies fastest
        if (!enumerated_by(space[d], kind)) continue;
        grid_index[d] = point % space[d].values.size();
        point /= space[d].values.size();
    }
    TrialValues values;
    for (std::size_t d = 0; d < space.size(); ++d)
        values.emplace_back(space[d].key, enumerated_by(space[d], kind) ? space[d].values[grid_index[d]]
                                                                         : space[d].sample(generator));
    return values;
}

}  // namespace trainrt::tune
