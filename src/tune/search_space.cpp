#include "tune/search_space.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "config/values.hpp"
#include "trainrt/error.hpp"
#include "workloads/python_calls.hpp"

namespace trainrt::tune {
namespace {

const std::map<std::string, DomainKind>& kinds() {
    static const std::map<std::string, DomainKind> names{
        {"choice", DomainKind::choice},     {"grid", DomainKind::grid},       {"uniform", DomainKind::uniform},
        {"quniform", DomainKind::quniform}, {"loguniform", DomainKind::loguniform},
        {"randint", DomainKind::randint},   {"qrandint", DomainKind::qrandint}, {"randn", DomainKind::randn},
        {"function", DomainKind::function}, {"searched", DomainKind::searched}};
    return names;
}

[[noreturn]] void bad(const Domain& domain, const std::string& why) {
    throw ConfigError(fmt::format("tune: [space] {} ({}): {}", domain.key, domain.source, why));
}

double number(const Domain& domain, const std::string& text) {
    return config::parse_real("[space] " + domain.key, text, domain.source);
}

// The numeric arguments of `domain` (counts checked), into low/high/q.
void take_numbers(Domain& domain, const std::vector<std::string>& arguments) {
    const bool quantized = domain.kind == DomainKind::quniform || domain.kind == DomainKind::qrandint;
    const std::size_t wanted = quantized ? 3 : 2;
    const char* name = domain_kind_name(domain.kind);
    if (domain.kind == DomainKind::randn && arguments.empty()) {
        domain.low = 0, domain.high = 1;
        return;
    }
    if (arguments.size() != wanted)
        bad(domain, fmt::format("{}() takes {} numbers ({}), got {}", name, wanted,
                                quantized ? "low, high, q" : domain.kind == DomainKind::randn ? "mean, sd" : "low, high",
                                arguments.size()));
    domain.low = number(domain, arguments[0]), domain.high = number(domain, arguments[1]);
    if (quantized) domain.q = number(domain, arguments[2]);
}

void check_numbers(const Domain& domain) {
    const char* name = domain_kind_name(domain.kind);
    if (domain.kind == DomainKind::randn) {
        if (!(domain.high > 0)) bad(domain, fmt::format("randn()'s sd must be > 0, got {}", domain.high));
        return;
    }
    if (!(domain.low < domain.high))
        bad(domain, fmt::format("{}() needs low < high, got low {} and high {}", name, domain.low, domain.high));
    if (domain.kind == DomainKind::loguniform && !(domain.low > 0))
        bad(domain, fmt::format("loguniform() needs low > 0 (a logarithm is taken), got {}", domain.low));
    if ((domain.kind == DomainKind::quniform || domain.kind == DomainKind::qrandint) && !(domain.q > 0))
        bad(domain, fmt::format("{}() needs q > 0, got {}", name, domain.q));
    if (domain.integral())
        for (double bound : {domain.low, domain.high, domain.q})
            if (bound != std::floor(bound)) bad(domain, fmt::format("{}() takes integers, got {}", name, bound));
}

double quantize(double value, double q) { return std::round(value / q) * q; }

// Draws without the standard distributions, whose algorithms are implementation-defined: a sweep
// restarted by another build (or on another machine) must draw the same trials.
double unit_real(std::mt19937_64& generator) { return static_cast<double>(generator() >> 11) * 0x1.0p-53; }

double real_between(std::mt19937_64& generator, double low, double high) {
    return low + (high - low) * unit_real(generator);
}

// Uniform in [low, high] (inclusive), by rejection so that no value is favoured.
std::int64_t integer_between(std::mt19937_64& generator, std::int64_t low, std::int64_t high) {
    const std::uint64_t span = static_cast<std::uint64_t>(high - low) + 1;
    const std::uint64_t limit = span == 0 ? 0 : UINT64_MAX - UINT64_MAX % span;
    std::uint64_t drawn = generator();
    while (span != 0 && drawn >= limit) drawn = generator();
    return low + static_cast<std::int64_t>(span == 0 ? drawn : drawn % span);
}

double normal(std::mt19937_64& generator, double mean, double sd) {  // Box-Muller
    const double u1 = 1.0 - unit_real(generator), u2 = unit_real(generator);
    return mean + sd * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

// function(PICKLE)'s value for `seed`, as config text (trainrt/_pbt_mutation.py draws it).
std::string function_value(const std::string& pickled, std::uint64_t seed) {
    const nlohmann::json request{{"function", pickled}, {"seed", seed}};
    const auto value = nlohmann::json::parse(workloads::call_python("_pbt_mutation", "draw", request.dump()));
    if (value.is_string()) return value.get<std::string>();
    if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
    if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
    return real_text(value.get<double>());
}

}  // namespace

std::string trim(const std::string& text) {
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string::npos) return "";
    return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// "a, b , c" -> {"a", "b", "c"}; an empty text gives no values.
std::vector<std::string> split_arguments(const std::string& text) {
    std::vector<std::string> parts;
    if (trim(text).empty()) return parts;
    std::size_t start = 0;
    for (std::size_t comma = text.find(','); ; comma = text.find(',', start)) {
        parts.push_back(trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return parts;
}

const char* domain_kind_name(DomainKind kind) {
    for (const auto& [name, named] : kinds())
        if (named == kind) return name.c_str();
    return "?";
}

std::string real_text(double value) { return fmt::format("{}", value); }  // shortest round-trip form

Domain parse_domain(const std::string& key, const std::string& text, const std::string& source) {
    Domain domain{key, source};
    const std::string written = trim(text);
    const auto open = written.find('(');
    if (open == std::string::npos || written.back() != ')') {
        std::vector<std::string> names;
        for (const auto& [name, kind] : kinds()) names.push_back(name);
        bad(domain, fmt::format("'{}' is not a domain; write one of {}(...), e.g. choice(32, 64) or "
                                "loguniform(1e-4, 1e-1)", written, fmt::join(names, "(...), ")));
    }
    const std::string name = trim(written.substr(0, open));
    const auto found = kinds().find(name);
    if (found == kinds().end()) {
        std::vector<std::string> names;
        for (const auto& [known, kind] : kinds()) names.push_back(known);
        const std::string close = config::closest_match(name, names);
        bad(domain, fmt::format("unknown domain '{}'{}; the domains are {}", name,
                                close.empty() ? "" : fmt::format(": did you mean '{}'?", close), fmt::join(names, ", ")));
    }
    domain.kind = found->second;
    const std::vector<std::string> arguments = split_arguments(written.substr(open + 1, written.size() - open - 2));
    if (domain.kind == DomainKind::function) {
        if (arguments.size() != 1 || arguments[0].empty())
            bad(domain, "function() takes one argument, the pickled function (trainrt.tune writes it)");
        domain.pickled = arguments[0];
        return domain;
    }
    if (domain.kind == DomainKind::searched) {
        if (!arguments.empty() && !(arguments.size() == 1 && arguments[0].empty()))
            bad(domain, "searched() takes no argument: the searcher's own space (tune.hyperopt.space) draws the value");
        return domain;
    }
    if (domain.enumerated()) {
        if (arguments.empty() || (arguments.size() == 1 && arguments[0].empty()))
            bad(domain, fmt::format("{}() is empty; give at least one value", name));
        for (const std::string& value : arguments)
            if (value.empty()) bad(domain, fmt::format("{}() has an empty value in '{}'", name, written));
        domain.values = arguments;
        return domain;
    }
    take_numbers(domain, arguments);
    check_numbers(domain);
    return domain;
}

std::string Domain::sample(std::mt19937_64& generator) const {
    const auto low_int = static_cast<std::int64_t>(low), high_int = static_cast<std::int64_t>(high);
    switch (kind) {
        case DomainKind::choice:
            return values[static_cast<std::size_t>(integer_between(generator, 0, static_cast<std::int64_t>(values.size()) - 1))];
        case DomainKind::grid: throw Error("tune: a grid's values are enumerated, not sampled");
        case DomainKind::uniform: return real_text(real_between(generator, low, high));
        case DomainKind::quniform: return real_text(quantize(real_between(generator, low, high), q));
        case DomainKind::loguniform: return real_text(std::exp(real_between(generator, std::log(low), std::log(high))));
        case DomainKind::randint: return std::to_string(integer_between(generator, low_int, high_int - 1));
        case DomainKind::qrandint: {
            const auto drawn = static_cast<double>(integer_between(generator, low_int, high_int));
            return std::to_string(static_cast<std::int64_t>(std::min(quantize(drawn, q), high)));
        }
        case DomainKind::randn: return real_text(normal(generator, low, high));
        case DomainKind::function: return function_value(pickled, generator());
        case DomainKind::searched: throw Error("tune: a searched() value is drawn by the searcher's space, not sampled");
    }
    throw Error("tune: unknown domain kind");
}

std::string Domain::text() const {
    const char* name = domain_kind_name(kind);
    if (enumerated()) return fmt::format("{}({})", name, fmt::join(values, ", "));
    if (kind == DomainKind::function) return fmt::format("{}({})", name, pickled);
    if (kind == DomainKind::searched) return fmt::format("{}()", name);
    if (kind == DomainKind::quniform || kind == DomainKind::qrandint)
        return fmt::format("{}({}, {}, {})", name, low, high, q);
    return fmt::format("{}({}, {})", name, low, high);
}

void check_against(const Domain& domain, const OptionSpec& spec) {
    if (domain.kind == DomainKind::searched)
        bad(domain, fmt::format("searched() sets a Python function's train.* key (a HyperOpt space's values are "
                                "nested); {} is one of trainrt's keys: give it a domain such as choice(...)", spec.key));
    if (domain.kind == DomainKind::function) return;  // each drawn value is checked when a trial starts
    if (domain.enumerated()) {
        for (const std::string& value : domain.values) config::check_value(spec, value, domain.source);
        return;
    }
    const bool integer_key = spec.kind == ValueKind::integer;
    if (spec.kind != ValueKind::integer && spec.kind != ValueKind::real)
        bad(domain, fmt::format("{} takes {}: a numeric domain cannot set it; use choice(...)", spec.key,
                                config::accepted(spec)));
    if (integer_key && !domain.integral())
        bad(domain, fmt::format("{} is an integer key: use randint(...) or qrandint(...) instead of {}()", spec.key,
                                domain_kind_name(domain.kind)));
    if (domain.kind == DomainKind::randn) return;  // unbounded: each drawn value is checked when a trial starts
    const double last = domain.kind == DomainKind::randint ? domain.high - 1 : domain.high;
    for (double bound : {domain.low, last})
        config::check_value(spec, integer_key ? std::to_string(static_cast<std::int64_t>(bound)) : real_text(bound),
                            domain.source);
}

}  // namespace trainrt::tune
