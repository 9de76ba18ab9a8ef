#include "config/values.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trainrt/error.hpp"

namespace trainrt::config {
namespace {

[[noreturn]] void bad_value(const std::string& key, const std::string& text,
                            const std::string& source, const std::string& what) {
    throw ConfigError(fmt::format("config: bad value '{}' for {} ({}): expected {}", text, key,
                                  source, what));
}

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

std::string format_bound(double value) {
    if (value == std::floor(value) && std::fabs(value) < 1e15)
        return fmt::format("{}", static_cast<long long>(value));
    return fmt::format("{}", value);
}

std::string bounds_text(const OptionSpec& spec) {
    bool has_min = spec.min > -1e299;
    bool has_max = spec.max < 1e299;
    if (has_min && has_max)
        return fmt::format(" in [{}, {}]", format_bound(spec.min), format_bound(spec.max));
    if (has_min) return fmt::format(" >= {}", format_bound(spec.min));
    if (has_max) return fmt::format(" <= {}", format_bound(spec.max));
    return "";
}

bool is_name(const std::string& text) {
    if (text.empty() || text == "." || text == "..") return false;
    return std::all_of(text.begin(), text.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '.' || c == '_' || c == '-';
    });
}

}  // namespace

std::int64_t parse_integer(const std::string& key, const std::string& text,
                           const std::string& source) {
    errno = 0;
    char* end = nullptr;
    long long value = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE) bad_value(key, text, source, "an integer");
    return value;
}

double parse_real(const std::string& key, const std::string& text, const std::string& source) {
    errno = 0;
    char* end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(value))
        bad_value(key, text, source, "a number");
    return value;
}

bool parse_boolean(const std::string& key, const std::string& text, const std::string& source) {
    std::string word = lower(text);
    if (word == "true" || word == "yes" || word == "on" || word == "1") return true;
    if (word == "false" || word == "no" || word == "off" || word == "0") return false;
    bad_value(key, text, source, "true or false");
}

std::string accepted(const OptionSpec& spec) {
    switch (spec.kind) {
        case ValueKind::integer: return "an integer" + bounds_text(spec);
        case ValueKind::real: return "a number" + bounds_text(spec);
        case ValueKind::boolean: return "true or false";
        case ValueKind::choice: return fmt::format("one of {}", fmt::join(spec.choices, ", "));
        case ValueKind::path: return "a file or directory path";
        case ValueKind::name:
            return "a name of letters, digits, '.', '_' and '-' (one path component, not '.' or '..')";
        case ValueKind::string: return "a string";
    }
    return "a value";
}

std::string check_value(const OptionSpec& spec, const std::string& text,
                        const std::string& source) {
    const std::string& key = spec.key;
    switch (spec.kind) {
        case ValueKind::integer: {
            auto value = static_cast<double>(parse_integer(key, text, source));
            if (value < spec.min || value > spec.max) bad_value(key, text, source, accepted(spec));
            return text;
        }
        case ValueKind::real: {
            double value = parse_real(key, text, source);
            if (value < spec.min || value > spec.max) bad_value(key, text, source, accepted(spec));
            return text;
        }
        case ValueKind::boolean: return parse_boolean(key, text, source) ? "true" : "false";
        case ValueKind::choice:
            if (std::find(spec.choices.begin(), spec.choices.end(), text) == spec.choices.end())
                bad_value(key, text, source, accepted(spec));
            return text;
        case ValueKind::name:
            if (!is_name(text)) bad_value(key, text, source, accepted(spec));
            return text;
        case ValueKind::path:
        case ValueKind::string: return text;
    }
    return text;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = up;
        }
    }
    return row[b.size()];
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
    std::string best;
    std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
    for (const std::string& candidate : candidates) {
        std::size_t d = edit_distance(word, candidate);
        if (d < best_distance) {
            best = candidate;
            best_distance = d;
        }
    }
    return best;
}

}  // namespace trainrt::config
