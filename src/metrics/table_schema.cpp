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

Arranged TableSchema::arrange(const FlatRow& row) const {
    Arranged values(columns_.size(), nullptr);
    for (const auto& [name, value] : row)
        if (auto at = index_of(name)) values[*at] = &value;
    return values;
}

namespace {

// Depth-first over a row: each key with its depth, each leaf value; `_ranks` is a level like any.
template <class Visit>
void walk(const nlohmann::ordered_json& object, int depth, Visit&& visit) {
    for (const auto& [key, value] : object.items()) {
        visit(depth, key, value.is_object() ? nullptr : &value);
        if (value.is_object()) walk(value, depth + 1, visit);
    }
}

}  // namespace

bool RowArranger::same_keys(const Row& row) {
    std::size_t at = 0;
    bool same = true;
    leaves_.clear();
    walk(row, 0, [&](int depth, const std::string& key, const nlohmann::ordered_json* leaf) {
        same = same && at < keys_.size() && keys_[at].first == depth && keys_[at].second == key;
        ++at;
        if (leaf != nullptr) leaves_.push_back(leaf);
    });
    return same && at == keys_.size();
}

// The names flatten() gives the leaves: the path joined by '/', without a top-level "_ranks".
bool RowArranger::learn(const TableSchema& schema, const Row& row) {
    keys_.clear();
    columns_.clear();
    std::vector<std::string> path;
    bool known = true;
    walk(row, 0, [&](int depth, const std::string& key, const nlohmann::ordered_json* leaf) {
        keys_.emplace_back(depth, key);
        path.resize(static_cast<std::size_t>(depth));
        path.push_back(key);
        if (leaf == nullptr) return;
        std::string name;
        for (std::size_t i = 0; i < path.size(); ++i)
            if (i > 0 || path[0] != "_ranks") name += (name.empty() ? "" : "/") + path[i];
        auto column = schema.index_of(name);
        known = known && column.has_value();
        columns_.push_back(column.value_or(0));
    });
    if (!known) keys_.clear();
    return known;
}

bool RowArranger::arrange(const TableSchema& schema, const Row& row, Arranged& out) {
    if (!same_keys(row) && !learn(schema, row)) return false;
    out.assign(schema.columns().size(), nullptr);
    for (std::size_t i = 0; i < leaves_.size(); ++i) {
        if (!holds(schema.columns()[columns_[i]].kind, *leaves_[i])) return false;
        out[columns_[i]] = leaves_[i];
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
