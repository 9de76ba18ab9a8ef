#pragma once
// A sweep's search space: the [space] section of sweep.ini, one Domain per config key, written as
// Ray Tune's functions are named: choice(a, b), grid(a, b), uniform(lo, hi), quniform(lo, hi, q),
// loguniform(lo, hi), randint(lo, hi), qrandint(lo, hi, q), randn(mean, sd), and function(PICKLE):
// a Python function of no argument, pickled (cloudpickle, base64), that draws a value when called
// (Ray's PopulationBasedTraining(hyperparam_mutations={"lr": lambda: random.uniform(...)})); each
// draw calls it in the Python component with Python's and NumPy's generators seeded from the
// sweep's, so that a restarted sweep draws the same values; and searched(): a value that the
// searcher's own space draws (search = hyperopt with tune.hyperopt.space, Ray's
// HyperOptSearch(space=...)), never sampled here. A trial's value is config text (what
// --section.key=VALUE takes), so a trial's config is an ordinary job's.
// Bounds as Ray's: randint's high is excluded, qrandint's included; quniform and qrandint round to
// a multiple of q. Every malformed domain is a ConfigError of one line naming the key and FILE:LINE.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "trainrt/config.hpp"

namespace trainrt::tune {

enum class DomainKind { choice, grid, uniform, quniform, loguniform, randint, qrandint, randn, function, searched };

struct Domain {
    std::string key;     // the config key it sets, e.g. "train.lr"
    std::string source;  // where it was written, e.g. "sweep.ini:12"
    DomainKind kind = DomainKind::choice;
    std::vector<std::string> values;  // choice, grid
    double low = 0, high = 0, q = 0;  // numeric domains; randn: low = mean, high = sd
    std::string pickled;              // function: the pickled function, base64

    bool enumerated() const { return kind == DomainKind::choice || kind == DomainKind::grid; }
    bool integral() const { return kind == DomainKind::randint || kind == DomainKind::qrandint; }
    // One value drawn from `generator` (a grid's values are enumerated, never drawn: Error).
    std::string sample(std::mt19937_64& generator) const;
    std::string text() const;  // the domain as written: "loguniform(0.0001, 0.1)"
};

const char* domain_kind_name(DomainKind kind);

// Parses `text` ("loguniform(1e-4, 1e-1)") for `key` written at `source`.
Domain parse_domain(const std::string& key, const std::string& text, const std::string& source);

// Checks a domain against its key's declaration (type, bounds, choices): a uniform over an integer
// key, a choice value a choice key does not take, a range outside the key's bounds: ConfigError.
void check_against(const Domain& domain, const OptionSpec& spec);

// A real value as config text that reads back to the same double.
std::string real_text(double value);

// `text` without its leading and trailing blanks.
std::string trim(const std::string& text);
// "a, b , c" -> {"a", "b", "c"}; an empty text gives no values.
std::vector<std::string> split_arguments(const std::string& text);

}  // namespace trainrt::tune
