#include "data/import/import_common.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data/dataset_writer.hpp"
#include "trainrt/error.hpp"

namespace trainrt::data {
namespace {

bool parse_fraction(const std::string& text, double& value) {
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    return ec == std::errc() && ptr == end;
}

std::size_t input_index(const std::string& file, const std::vector<std::string>& inputs) {
    for (std::size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i] == file || std::filesystem::path(inputs[i]).filename() == file) return i;
    throw DataError(fmt::format("data import: --split names {}, which is not one of the input files ({})", file,
                                fmt::join(inputs, ", ")));
}

std::size_t name_index(SplitPlan& plan, const std::string& name) {
    auto found = std::find(plan.names.begin(), plan.names.end(), name);
    if (found != plan.names.end()) return static_cast<std::size_t>(found - plan.names.begin());
    plan.names.push_back(name);
    return plan.names.size() - 1;
}

void check_fractions(const SplitPlan& plan, const std::string& spec) {
    const double sum = std::accumulate(plan.fractions.begin(), plan.fractions.end(), 0.0);
    if (std::abs(sum - 1.0) > 1e-6)
        throw DataError(fmt::format("data import: --split {}: the fractions add up to {:.6g}, not 1", spec, sum));
    for (std::size_t i = 0; i < plan.names.size(); ++i)
        if (std::count(plan.names.begin(), plan.names.end(), plan.names[i]) > 1)
            throw DataError(fmt::format("data import: --split {}: split '{}' is named twice", spec, plan.names[i]));
}

void assign_files(SplitPlan& plan, const std::vector<std::pair<std::size_t, std::size_t>>& assigned,
                  const std::string& spec, const std::vector<std::string>& inputs) {
    plan.file_split.assign(inputs.size(), SIZE_MAX);
    for (auto [input, split] : assigned) {
        if (plan.file_split[input] != SIZE_MAX)
            throw DataError(fmt::format("data import: --split {}: {} is named twice", spec, inputs[input]));
        plan.file_split[input] = split;
    }
    for (std::size_t i = 0; i < inputs.size(); ++i)
        if (plan.file_split[i] == SIZE_MAX)
            throw DataError(fmt::format("data import: --split {}: {} is in no split; name it or leave it out",
                                        spec, inputs[i]));
}

void check_pair(const PlannedColumn& earlier, const PlannedColumn& later) {
    if (earlier.name == later.name)
        throw DataError(fmt::format("data import: column name '{}' appears twice ({} and {}); rename one: {}",
                                    later.name, earlier.where, later.where, later.rename));
    if (earlier.rows != later.rows)
        throw DataError(fmt::format("data import: {} has {} rows, {} has {}: the columns of a split need the same "
                                    "first dimension", earlier.where, earlier.rows, later.where, later.rows));
}

}  // namespace

bool valid_name(const std::string& name) {
    if (name.empty() || name == "." || name == "..") return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    });
}

std::string dataset_name(const ImportOptions& options, const std::string& fallback) {
    if (!options.name.empty()) return options.name;
    return fallback.empty() ? std::filesystem::path(options.out).stem().string() : fallback;
}

std::vector<std::string> split_list(const std::string& text, char separator) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t end = text.find(separator, start);
        parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) return parts;
        start = end + 1;
    }
}

NamedValue split_named(const std::string& text) {
    const std::size_t equals = text.find('=');
    if (equals == std::string::npos) return {"", text};
    return {text.substr(0, equals), text.substr(equals + 1)};
}

void check_columns(const std::vector<PlannedColumn>& columns) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
        const PlannedColumn& column = columns[i];
        if (!valid_name(column.name))
            throw DataError(fmt::format("data import: {}: '{}' is not a column name (letters, digits, _ - .); "
                                        "rename it: {}", column.where, column.name, column.rename));
        for (std::size_t j = 0; j < i; ++j)
            if (columns[j].split == column.split) check_pair(columns[j], column);
        if (column.rows == 0)
            throw DataError(fmt::format("data import: {} has no rows (a scalar, or a first dimension of 0)",
                                        column.where));
    }
}

void append_rows(const std::vector<ColumnWriter*>& writers, const RowAssigner& assigner, std::uint64_t first_row,
                 const std::byte* rows, std::uint64_t count, std::size_t row_bytes) {
    for (std::uint64_t begin = 0; begin < count;) {
        const std::size_t split = assigner.split_of(first_row + begin);
        std::uint64_t end = begin + 1;
        while (end < count && assigner.split_of(first_row + end) == split) ++end;
        writers[split]->append(rows + begin * row_bytes, end - begin);
        begin = end;
    }
}

SplitPlan parse_split(const std::string& spec, const std::vector<std::string>& inputs) {
    SplitPlan plan;
    if (spec.empty()) {
        plan.names = {"train"};
        plan.fractions = {1.0};
        return plan;
    }
    std::vector<std::pair<std::size_t, std::size_t>> assigned;  // (input, split)
    for (const std::string& item : split_list(spec)) {
        const NamedValue named = split_named(item);
        if (!valid_name(named.name) || named.value.empty())
            throw DataError(fmt::format("data import: --split {}: '{}' is not NAME=FRACTION or NAME=FILE (names: "
                                        "letters, digits, _ - .)", spec, item));
        double fraction = 0.0;
        if (!parse_fraction(named.value, fraction)) {
            assigned.emplace_back(input_index(named.value, inputs), name_index(plan, named.name));
            continue;
        }
        if (!(fraction > 0.0 && fraction <= 1.0))
            throw DataError(fmt::format("data import: --split {}: fraction {} of '{}' is not in (0, 1]", spec,
                                        named.value, named.name));
        plan.names.push_back(named.name);
        plan.fractions.push_back(fraction);
    }
    if (!plan.fractions.empty() && !assigned.empty())
        throw DataError(fmt::format("data import: --split {}: give fractions or files, not both", spec));
    if (assigned.empty()) check_fractions(plan, spec);
    else assign_files(plan, assigned, spec, inputs);
    return plan;
}

RowAssigner::RowAssigner(const SplitPlan& plan, std::uint64_t rows, std::uint64_t seed)
    : order_(rows, plan.names.size() > 1 ? Shuffle::global : Shuffle::none, seed, 0x73706C6974ULL) {
    std::uint64_t assigned = 0;
    for (double fraction : plan.fractions) {
        counts_.push_back(static_cast<std::uint64_t>(std::floor(fraction * static_cast<double>(rows))));
        assigned += counts_.back();
    }
    for (std::size_t i = 0; assigned < rows; i = (i + 1) % counts_.size(), ++assigned) ++counts_[i];
    std::uint64_t end = 0;
    for (std::uint64_t count : counts_) ends_.push_back(end += count);
}

std::size_t RowAssigner::split_of(std::uint64_t row) const {
    const std::uint64_t position = order_.row(row);
    return static_cast<std::size_t>(std::upper_bound(ends_.begin(), ends_.end(), position) - ends_.begin());
}

std::vector<std::uint64_t> split_counts(const SplitPlan& plan, const std::vector<std::uint64_t>& file_rows,
                                        std::uint64_t seed) {
    const std::uint64_t total = std::accumulate(file_rows.begin(), file_rows.end(), std::uint64_t{0});
    std::vector<std::uint64_t> counts;
    if (plan.by_file()) {
        counts.assign(plan.names.size(), 0);
        for (std::size_t f = 0; f < file_rows.size(); ++f) counts[plan.file_split[f]] += file_rows[f];
    } else {
        counts = RowAssigner(plan, total, seed).counts();
    }
    for (std::size_t s = 0; s < counts.size(); ++s)
        if (counts[s] == 0)
            throw DataError(fmt::format("data import: split '{}' would get none of the {} rows; give it a larger "
                                        "fraction or more data", plan.names[s], total));
    return counts;
}

}  // namespace trainrt::data
