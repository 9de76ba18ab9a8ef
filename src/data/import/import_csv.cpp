// `trainrt data import csv`: two passes over the files. The first checks every row and cell and
// counts the rows (so nothing is written for bad input, and split sizes are known); the second
// parses again and appends each row to its split. Memory stays bounded by a chunk per column.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "data/dataset_writer.hpp"
#include "data/import/importers.hpp"
#include "trainrt/error.hpp"

namespace trainrt::data {
namespace {

// Which fields of a row become what.
struct CsvLayout {
    std::vector<std::string> names;      // every column's name (c0, c1, ... without a header)
    std::vector<std::size_t> features;   // feature fields, in output order
    std::optional<std::size_t> label;    // the label field (not with --label-file)
    std::string label_name;
    std::vector<std::uint64_t> file_rows;
    std::uint64_t label_rows = 0;        // rows of --label-file
    bool label_integers = true;          // every label cell written as an integer
    std::int64_t label_min = 0, label_max = 0;
};

std::vector<std::string> column_names(CsvSource& source) {
    std::vector<std::string> names = source.read_header();
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i].empty()) names[i] = fmt::format("c{}", i);
        for (std::size_t j = 0; j < i; ++j)
            if (names[j] == names[i])
                throw DataError(fmt::format("data import: {}: column name '{}' appears twice (columns {} and {}); "
                                            "rename one", source.where(), names[i], j + 1, i + 1));
    }
    return names;
}

// A column by name or 0-based index (negative: from the end).
std::size_t resolve(const std::string& wanted, const std::vector<std::string>& names, const char* option) {
    auto found = std::find(names.begin(), names.end(), wanted);
    if (found != names.end()) return static_cast<std::size_t>(found - names.begin());
    long long index = 0;
    auto [ptr, ec] = std::from_chars(wanted.data(), wanted.data() + wanted.size(), index);
    const auto count = static_cast<long long>(names.size());
    if (ec == std::errc() && ptr == wanted.data() + wanted.size() && index >= -count && index < count)
        return static_cast<std::size_t>(index < 0 ? index + count : index);
    throw DataError(fmt::format("data import: {} '{}' is neither a column name nor an index below {} (columns: {})",
                                option, wanted, count, fmt::join(names, ", ")));
}

void choose_columns(const CsvOptions& options, CsvLayout& layout) {
    if (!options.common.label.empty() && !options.label_file.empty())
        throw DataError("data import: give --label or --label-file, not both");
    if (!options.common.label.empty()) {
        layout.label = resolve(options.common.label, layout.names, "--label");
        layout.label_name = layout.names[*layout.label];
    }
    if (options.columns.empty()) {
        for (std::size_t i = 0; i < layout.names.size(); ++i)
            if (i != layout.label) layout.features.push_back(i);
    } else {
        for (const std::string& name : split_list(options.columns)) {
            const std::size_t index = resolve(name, layout.names, "--columns");
            if (index == layout.label)
                throw DataError(fmt::format("data import: --columns names the label column '{}'", name));
            if (std::find(layout.features.begin(), layout.features.end(), index) != layout.features.end())
                throw DataError(fmt::format("data import: --columns names column '{}' twice (as '{}'); a feature "
                                            "is imported once: name each column once", layout.names[index], name));
            layout.features.push_back(index);
        }
    }
    if (layout.features.empty())
        throw DataError("data import: no feature columns are left; choose them with --columns");
}

// Why a cell is refused: it does not read as a finite float64 (read_number), or, reading as one,
// it overflows the float32 features are stored as. A label cannot be left out with --columns.
std::string cell_error(const CsvSource& source, std::size_t field, const std::vector<std::string>& names,
                       const std::string& cell, bool label = false) {
    const std::string cell_at = fmt::format("data import: {}:{}: {} (column '{}')", source.where(), field + 1,
                                            cell.empty() ? std::string("an empty cell") : fmt::format("'{}'", cell),
                                            names[field]);
    const std::string or_leave_out = label ? "" : ", or leave the column out with --columns";
    double value = 0;
    switch (read_number(cell, value)) {
        case CellNumber::not_finite:
            return cell_at + " is not a finite number; fill or drop missing and infinite values before importing" +
                   or_leave_out;
        case CellNumber::out_of_range:
            return cell_at + " is a number float64 cannot hold (beyond 1.8e308, or below 4.9e-324 and not 0); "
                             "rescale the column" + or_leave_out;
        case CellNumber::ok:
            return cell_at + " is beyond float32's range (3.4e38); import with --dtype f64";
        case CellNumber::not_a_number: break;
    }
    return cell_at + " is not a number; fix the cell" + or_leave_out;
}

// A feature cell that is a finite float64 and, stored as float32, still finite.
bool feature_fits(const std::string& cell, bool float32) {
    double value = 0;
    return parse_number(cell, value) && !(float32 && std::isinf(static_cast<float>(value)));
}

void check_row(const CsvSource& source, const std::vector<std::string>& fields, const CsvLayout& layout) {
    if (fields.size() != layout.names.size())
        throw DataError(fmt::format("data import: {}: {} fields, expected {} (one per column); every row needs "
                                    "the same number of fields", source.where(), fields.size(), layout.names.size()));
}

void note_label(const std::string& cell, CsvLayout& layout, bool first) {
    std::int64_t value = 0;
    auto [ptr, ec] = std::from_chars(cell.data() + (cell[0] == '+'), cell.data() + cell.size(), value);
    if (!is_integer_literal(cell) || ec != std::errc() || ptr != cell.data() + cell.size()) {
        layout.label_integers = false;
        return;
    }
    layout.label_min = first ? value : std::min(layout.label_min, value);
    layout.label_max = first ? value : std::max(layout.label_max, value);
}

std::uint64_t scan_file(CsvSource& source, CsvLayout& layout, std::uint64_t labels_before, bool float32) {
    std::vector<std::string> fields;
    std::uint64_t rows = 0;
    double value = 0;
    while (source.next_row(fields)) {
        check_row(source, fields, layout);
        for (std::size_t f : layout.features)
            if (!feature_fits(fields[f], float32)) throw DataError(cell_error(source, f, layout.names, fields[f]));
        if (layout.label) {
            const std::string& cell = fields[*layout.label];
            if (!parse_number(cell, value))
                throw DataError(cell_error(source, *layout.label, layout.names, cell, true));
            note_label(cell, layout, labels_before + rows == 0);
        }
        ++rows;
    }
    if (rows == 0) throw DataError(fmt::format("data import: {}: no data rows", source.path()));
    return rows;
}

std::uint64_t scan_label_file(const std::string& path, const CsvFormat& format, CsvLayout& layout) {
    CsvSource source(path, format);
    CsvLayout labels;
    labels.names = column_names(source);
    if (labels.names.size() != 1)
        throw DataError(fmt::format("data import: --label-file {} has {} columns; it must have one (the label)", path,
                                    labels.names.size()));
    labels.label = 0;
    labels.features = {};
    std::vector<std::string> fields;
    std::uint64_t rows = 0;
    double value = 0;
    while (source.next_row(fields)) {
        check_row(source, fields, labels);
        if (!parse_number(fields[0], value)) throw DataError(cell_error(source, 0, labels.names, fields[0], true));
        note_label(fields[0], labels, rows == 0);
        ++rows;
    }
    layout.label_name = format.header ? labels.names[0] : "label";
    layout.label_integers = labels.label_integers;
    layout.label_min = labels.label_min, layout.label_max = labels.label_max;
    return rows;
}

CsvLayout scan(const std::vector<std::string>& files, const CsvOptions& options) {
    CsvLayout layout;
    for (std::size_t f = 0; f < files.size(); ++f) {
        CsvSource source(files[f], options.format);
        std::vector<std::string> names = column_names(source);
        if (f == 0) {
            layout.names = names;
            choose_columns(options, layout);
        } else if (names != layout.names) {
            throw DataError(fmt::format("data import: {}: its columns ({}) differ from {}'s ({}); files imported "
                                        "together need the same columns", files[f], fmt::join(names, ", "), files[0],
                                        fmt::join(layout.names, ", ")));
        }
        std::uint64_t before = 0;
        for (std::uint64_t rows : layout.file_rows) before += rows;
        layout.file_rows.push_back(scan_file(source, layout, before, options.dtype == "f32"));
    }
    if (!options.label_file.empty()) {
        layout.label_rows = scan_label_file(options.label_file, options.format, layout);
        std::uint64_t total = 0;
        for (std::uint64_t rows : layout.file_rows) total += rows;
        if (layout.label_rows != total)
            throw DataError(fmt::format("data import: --label-file {} has {} rows, the data has {}; they must match "
                                        "row for row", options.label_file, layout.label_rows, total));
    }
    return layout;
}

ColumnType label_type(const CsvOptions& options, const CsvLayout& layout) {
    if (options.label_type == "int") {
        if (!layout.label_integers)
            throw DataError("data import: --label-type int, but some labels are not written as integers");
        return ColumnType::i64;
    }
    if (options.label_type == "float") return ColumnType::f64;
    return layout.label_integers ? ColumnType::i64 : ColumnType::f64;
}

bool has_label(const CsvLayout& layout) { return !layout.label_name.empty(); }

// The per-split column writers of the output.
struct CsvOutput {
    std::vector<ColumnWriter*> features, labels;
    ColumnType feature_type, label_type;
};

CsvOutput create_columns(DatasetWriter& writer, const SplitPlan& plan, const std::vector<std::uint64_t>& counts,
                         const CsvLayout& layout, const CsvOptions& options, const std::string& source) {
    CsvOutput out{{}, {}, options.dtype == "f64" ? ColumnType::f64 : ColumnType::f32, label_type(options, layout)};
    nlohmann::json names = nlohmann::json::array();
    for (std::size_t f : layout.features) names.push_back(layout.names[f]);
    for (std::size_t s = 0; s < plan.names.size(); ++s) {
        NewColumn features{"features", out.feature_type, {layout.features.size()}, counts[s], source};
        out.features.push_back(&writer.add_column(plan.names[s], features));
        out.features.back()->attribute("names", names.dump());
        writer.split_attribute(plan.names[s], "source", source);
        if (!has_label(layout)) continue;
        NewColumn label{"label", out.label_type, {}, counts[s], source};
        out.labels.push_back(&writer.add_column(plan.names[s], label));
        out.labels.back()->attribute("name", layout.label_name);
        if (out.label_type == ColumnType::i64 && layout.label_min >= 0)
            out.labels.back()->attribute("num_classes", layout.label_max + 1);
    }
    return out;
}

void append_label(ColumnWriter& writer, ColumnType type, const std::string& cell) {
    if (type == ColumnType::i64) {
        std::int64_t value = 0;
        std::from_chars(cell.data() + (cell[0] == '+'), cell.data() + cell.size(), value);
        writer.append(&value, 1);
        return;
    }
    double value = 0;
    parse_number(cell, value);
    writer.append(&value, 1);
}

void append_features(ColumnWriter& writer, ColumnType type, const std::vector<std::string>& fields,
                     const CsvLayout& layout, std::vector<float>& f32, std::vector<double>& f64) {
    f64.resize(layout.features.size());
    for (std::size_t i = 0; i < layout.features.size(); ++i) parse_number(fields[layout.features[i]], f64[i]);
    if (type == ColumnType::f64) {
        writer.append(f64.data(), 1);
        return;
    }
    f32.assign(f64.begin(), f64.end());
    writer.append(f32.data(), 1);
}

void write_rows(const std::vector<std::string>& files, const CsvOptions& options, const CsvLayout& layout,
                const SplitPlan& plan, const CsvOutput& out, std::uint64_t total) {
    std::optional<RowAssigner> assigner;
    if (!plan.by_file()) assigner.emplace(plan, total, options.common.seed);
    std::unique_ptr<CsvSource> labels;
    if (!options.label_file.empty()) {
        labels = std::make_unique<CsvSource>(options.label_file, options.format);
        labels->read_header();
    }
    std::vector<std::string> fields, label_fields;
    std::vector<float> f32;
    std::vector<double> f64;
    std::uint64_t row = 0;
    for (std::size_t f = 0; f < files.size(); ++f) {
        CsvSource source(files[f], options.format);
        source.read_header();
        while (source.next_row(fields)) {
            const std::size_t split = plan.by_file() ? plan.file_split[f] : assigner->split_of(row);
            append_features(*out.features[split], out.feature_type, fields, layout, f32, f64);
            if (layout.label) append_label(*out.labels[split], out.label_type, fields[*layout.label]);
            if (labels && labels->next_row(label_fields)) append_label(*out.labels[split], out.label_type, label_fields[0]);
            ++row;
        }
    }
}

}  // namespace

ImportReport import_csv(const std::vector<std::string>& files, const CsvOptions& options) {
    if (files.empty()) throw DataError("data import csv: no input files");
    if (options.dtype != "f32" && options.dtype != "f64")
        throw DataError(fmt::format("data import: --dtype {}: expected f32 or f64", options.dtype));
    if (options.label_type != "auto" && options.label_type != "int" && options.label_type != "float")
        throw DataError(fmt::format("data import: --label-type {}: expected auto, int or float", options.label_type));
    const SplitPlan plan = parse_split(options.common.split, files);
    const CsvLayout layout = scan(files, options);
    const std::vector<std::uint64_t> counts = split_counts(plan, layout.file_rows, options.common.seed);
    std::uint64_t total = 0;
    for (std::uint64_t rows : layout.file_rows) total += rows;

    const std::string source = fmt::format("csv: {}", fmt::join(files, ", "));
    DatasetWriter writer(options.common.out, options.common.compression);
    writer.describe(dataset_name(options.common), source, "features", has_label(layout) ? "label" : "");
    const CsvOutput out = create_columns(writer, plan, counts, layout, options, source);
    write_rows(files, options, layout, plan, out, total);
    writer.commit();

    ImportReport report;
    report.what = fmt::format("{} rows, {} features ({})", total, layout.features.size(), column_type_name(out.feature_type));
    if (has_label(layout))
        report.what += fmt::format(" + label '{}' ({})", layout.label_name, column_type_name(out.label_type));
    for (std::size_t s = 0; s < plan.names.size(); ++s) report.splits.emplace_back(plan.names[s], counts[s]);
    return report;
}

}  // namespace trainrt::data
