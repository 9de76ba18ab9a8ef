#include "metrics/rows_file.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <unordered_set>

#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::metrics {
namespace {

constexpr std::array<const char*, 6> autofilled_first{
    "_training_iteration", "_timestamp", "_time_this_iter_s", "_time_total_s", "restart_count", "world_size"};

void flatten_into(const std::string& prefix, const nlohmann::ordered_json& value,
                  std::vector<std::pair<std::string, nlohmann::ordered_json>>& out) {
    if (!value.is_object()) {
        out.emplace_back(prefix, value);
        return;
    }
    for (const auto& [key, inner] : value.items())
        flatten_into(prefix.empty() ? key : prefix + "/" + key, inner, out);
}

}  // namespace

std::optional<double> number_in(const Row& row, const std::string& key) {
    auto found = row.find(key);
    return found != row.end() && found->is_number() ? std::optional(found->get<double>()) : std::nullopt;
}

RowsRead read_rows(const std::string& path) {
    RowsRead read;
    if (!storage::path_exists(path)) return read;
    std::ifstream in(path);
    if (!in) throw StorageError("cannot read " + path + ": check its permissions");
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        auto row = Row::parse(line, nullptr, false);
        if (row.is_discarded() || !row.is_object()) ++read.torn_lines;
        else read.rows.push_back(std::move(row));
    }
    return read;
}

std::vector<std::pair<std::string, nlohmann::ordered_json>> flatten(const Row& row) {
    std::vector<std::pair<std::string, nlohmann::ordered_json>> columns;
    for (const char* key : autofilled_first)
        if (row.contains(key)) columns.emplace_back(key, row.at(key));
    for (const auto& [key, value] : row.items()) {
        if (std::find(autofilled_first.begin(), autofilled_first.end(), key) != autofilled_first.end())
            continue;
        flatten_into(key == "_ranks" ? "" : key, value, columns);
    }
    return columns;
}

std::vector<std::string> column_union(const std::vector<Row>& rows) {
    std::vector<std::string> names;
    std::unordered_set<std::string> seen;
    for (const Row& row : rows)
        for (const auto& [name, value] : flatten(row))
            if (seen.insert(name).second) names.push_back(name);
    return names;
}

}  // namespace trainrt::metrics
