#include "cli/plot_data.hpp"

#include <algorithm>
#include <unordered_map>

namespace trainrt::cli::plot {
namespace {

using Json = nlohmann::ordered_json;

std::optional<double> number_of(const Json& value) {
    if (!value.is_number()) return std::nullopt;
    return value.get<double>();
}

std::optional<double> field_number(const metrics::Row& row, const char* key) {
    auto found = row.find(key);
    return found == row.end() ? std::nullopt : number_of(*found);
}

// The rows that can be placed on the x axis.
std::vector<metrics::Row> plottable(const std::vector<metrics::Row>& rows) {
    std::vector<metrics::Row> kept;
    for (const metrics::Row& row : rows)
        if (field_number(row, "_training_iteration")) kept.push_back(row);
    return kept;
}

// Rank 0's step time for a row without cross-rank summaries.
std::optional<double> rank0_step(const metrics::Row& row) {
    return row.contains("_ranks") ? std::nullopt : field_number(row, "_time_this_iter_s");
}

// Columns with at least one number (x excluded), in the rows' column order.
std::vector<std::string> numeric_columns(const std::vector<std::unordered_map<std::string, double>>& flat,
                                         const std::vector<metrics::Row>& rows) {
    std::vector<std::string> numeric;
    for (const std::string& name : metrics::column_union(rows)) {
        if (name == "_training_iteration") continue;
        if (std::any_of(flat.begin(), flat.end(), [&](const auto& row) { return row.count(name) > 0; }))
            numeric.push_back(name);
    }
    return numeric;
}

// The columns that flatten() makes of the rows' `_ranks` objects ("loss/max", ...).
std::set<std::string> rank_summary_columns(const std::vector<metrics::Row>& rows) {
    std::set<std::string> names;
    for (const metrics::Row& row : rows)
        if (row.contains("_ranks"))
            for (const auto& [name, value] : metrics::flatten(metrics::Row{{"_ranks", row["_ranks"]}}))
                names.insert(name);
    return names;
}

}  // namespace

int Table::column_number(const std::string& name) const {
    auto found = std::find(columns.begin(), columns.end(), name);
    return found == columns.end() ? 0 : static_cast<int>(found - columns.begin()) + 2;
}

Table build_table(const std::vector<metrics::Row>& all_rows) {
    const std::vector<metrics::Row> rows = plottable(all_rows);
    std::vector<std::unordered_map<std::string, double>> flat(rows.size());
    bool any_rank0 = false;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        for (const auto& [name, value] : metrics::flatten(rows[i]))
            if (auto number = number_of(value)) flat[i].emplace(name, *number);
        any_rank0 = any_rank0 || rank0_step(rows[i]).has_value();
    }
    Table table;
    table.rank_summaries = rank_summary_columns(rows);
    table.columns = numeric_columns(flat, rows);
    if (any_rank0) table.columns.push_back(kRank0StepColumn);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        table.iterations.push_back(*field_number(rows[i], "_training_iteration"));
        std::vector<std::optional<double>> cells;
        for (const std::string& name : table.columns) {
            auto found = flat[i].find(name);
            cells.push_back(found != flat[i].end() ? std::optional<double>(found->second) : std::nullopt);
        }
        if (any_rank0) cells.back() = rank0_step(rows[i]);
        table.cells.push_back(std::move(cells));
    }
    return table;
}

namespace {

struct StartEvent {
    double time = 0;
    int restart_count = 0;
    std::string reason;
};

// The attempts whose start time is known, oldest first.
std::vector<StartEvent> start_events(const runlog::History& history) {
    std::vector<StartEvent> starts;
    for (const runlog::Attempt& attempt : history.attempts) {
        if (!attempt.begin) continue;
        const runlog::Event& start = history.event(attempt.start);
        starts.push_back({*attempt.begin, start.restart_count, start.as<runlog::StartEvent>()->reason});
    }
    return starts;
}

// The attempt (0 = first start) a row belongs to: the number of start events at or before it,
// less one. A row without `_timestamp` belongs to no known attempt (-1).
int attempt_of(const metrics::Row& row, const std::vector<StartEvent>& starts) {
    auto stamp = field_number(row, "_timestamp");
    if (!stamp) return -1;
    // An event's time is truncated to the millisecond, so it is never after the true start.
    return static_cast<int>(std::count_if(starts.begin(), starts.end(),
                                          [&](const StartEvent& s) { return s.time <= *stamp; })) - 1;
}

// The reason of the last start event recorded with `restart_count`; empty when none.
std::string reason_for_count(const std::vector<StartEvent>& starts, int restart_count) {
    std::string reason;
    for (const StartEvent& start : starts)
        if (start.restart_count == restart_count) reason = start.reason;
    return reason;
}

int restart_count_of(const metrics::Row& row) {
    auto count = field_number(row, "restart_count");
    return count ? static_cast<int>(*count) : 0;
}

}  // namespace

std::vector<RestartMark> find_restarts(const std::vector<metrics::Row>& all_rows, const runlog::History& history) {
    const std::vector<metrics::Row> rows = plottable(all_rows);
    const std::vector<StartEvent> starts = start_events(history);
    std::vector<RestartMark> marks;
    int previous_attempt = 0, previous_count = rows.empty() ? 0 : restart_count_of(rows[0]);
    for (const metrics::Row& row : rows) {
        const int attempt = attempt_of(row, starts), count = restart_count_of(row);
        const double x = *field_number(row, "_training_iteration");
        if (attempt > previous_attempt)
            marks.push_back({x, attempt, starts[static_cast<std::size_t>(attempt)].reason});
        else if (count > previous_count)
            marks.push_back({x, count, reason_for_count(starts, count)});
        previous_attempt = std::max(previous_attempt, attempt);
        previous_count = std::max(previous_count, count);
    }
    return marks;
}

}  // namespace trainrt::cli::plot
