#include "metrics/table_schema.hpp"

#include <unordered_map>

namespace trainrt::metrics {
namespace {

bool integer_column(const std::string& name) {
    return name == "_training_iteration" || name == "restart_count" || name == "world_size" ||
           (name.size() > 9 && name.compare(name.size() - 9, 9, "/max_rank") == 0);
}

// A tag column holds anything (written as text); numeric columns hold numbers.
bool holds(ColumnKind kind, const nlohmann::ordered_json& value) {
    if (value.is_null() || kind == ColumnKind::text) return true;
    return value.is_number() || value.is_boolean();
}

}  // namespace

ColumnKind kind_of(const std::string& column, const nlohmann::ordered_json& value) {
    if (value.is_string() || value.is_object() || value.is_array()) return ColumnKind::text;
    return integer_column(column) ? ColumnKind::integer : ColumnKind::real;
}

// A column is text when any row holds a string there (a tag), else numeric.
TableSchema::TableSchema(const std::vector<Row>& rows) {
    for (const Row& row : rows)
        for (const auto& [name, value] : flatten(row)) {
            auto [at, added] = index_.emplace(name, columns_.size());
            if (added) columns_.push_back({name, kind_of(name, value)});
            else if (!value.is_null() && kind_of(name, value) == ColumnKind::text)
                columns_[at->second].kind = ColumnKind::text;
        }
}

TableSchema::TableSchema(std::vector<Column> columns) : columns_(std::move(columns)) {
    for (std::size_t i = 0; i < columns_.size(); ++i) index_.emplace(columns_[i].name, i);
}

std::optional<std::size_t> TableSchema::index_of(const std::string& name) const {
    auto at = index_.find(name);
    if (at == index_.end()) return std::nullopt;
    return at->second;
}

bool TableSchema::fits(const FlatRow& row) const {
    for (const auto& [name, value] : row) {
        auto at = index_.find(name);
        if (at == index_.end() || !holds(columns_[at->second].kind, value)) return false;
    }
    return true;
}

bool TableSchema::operator==(const TableSchema& other) const {
    if (columns_.size() != other.columns_.size()) return false;
    for (std::size_t i = 0; i < columns_.size(); ++i)
        if (columns_[i].name != other.columns_[i].name || columns_[i].kind != other.columns_[i].kind)
            return false;
    return true;
}

}  // namespace trainrt::metrics
