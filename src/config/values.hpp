#pragma once
// Parsing and checking one config value against its OptionSpec. Every failure is a ConfigError
// of one line: the key, where the value came from, the value, and what is accepted.
#include <cstdint>
#include <string>
#include <vector>

#include "trainrt/config.hpp"

namespace trainrt::config {

std::int64_t parse_integer(const std::string& key, const std::string& text,
                           const std::string& source);
double parse_real(const std::string& key, const std::string& text, const std::string& source);
bool parse_boolean(const std::string& key, const std::string& text, const std::string& source);

// Checks type, bounds and choices; returns the value normalised (booleans as true/false).
std::string check_value(const OptionSpec& spec, const std::string& text,
                        const std::string& source);

// What a spec accepts, in words: "an integer >= 1", "one of auto, mpi, nccl".
std::string accepted(const OptionSpec& spec);

// Levenshtein distance: the fewest insertions, deletions and substitutions from a to b.
std::size_t edit_distance(const std::string& a, const std::string& b);

// The candidate closest to `word` by edit distance, or "" when none is close.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace trainrt::config
