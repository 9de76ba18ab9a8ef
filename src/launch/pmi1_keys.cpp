#include "launch/pmi1_keys.hpp"

#include <array>
#include <charconv>
#include <regex>
#include <string>

namespace trainrt::launch::pmi1 {
namespace {

// Each pattern captures the owner rank as group 1.
const std::array<std::regex, 3>& owner_patterns() {
    static const std::array<std::regex, 3> patterns{
        std::regex(R"(^-(?:bcast|allgather|allgather-shm)-[0-9]+-([0-9]+)(?:-seg-[0-9]+/[0-9]+)?$)"),
        std::regex(R"(^hostname\[([0-9]+)\]$)"),
        std::regex(R"(^P([0-9]+)-businesscard$)"),
    };
    return patterns;
}

std::optional<int> parse_rank(const std::string& digits, int world_size) {
    int rank = -1;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
    if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    if (rank < 0 || rank >= world_size) return std::nullopt;
    return rank;
}

}  // namespace

std::optional<int> mpich_key_owner(std::string_view key, int world_size) {
    const std::string text(key);
    std::smatch match;
    for (const auto& pattern : owner_patterns()) {
        if (std::regex_match(text, match, pattern)) return parse_rank(match[1].str(), world_size);
    }
    return std::nullopt;
}

}  // namespace trainrt::launch::pmi1
