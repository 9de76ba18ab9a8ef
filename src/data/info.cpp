// `trainrt data info DATA.h5`: what a dataset file holds, for people.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data/dataset_file.hpp"
#include "data/import/importers.hpp"

namespace trainrt::data {
namespace {

std::string shape_text(const ColumnInfo& column, std::size_t rows) {
    std::vector<std::size_t> shape{rows};
    shape.insert(shape.end(), column.sample_shape.begin(), column.sample_shape.end());
    return fmt::format("[{}]", fmt::join(shape, ", "));
}

}  // namespace

std::string describe_dataset(const std::string& path) {
    const DatasetInfo info = read_dataset_info(path);
    std::string text = fmt::format("{}: trainrt dataset, format version {}\n", path, info.version);
    if (!info.name.empty()) text += fmt::format("  name:     {}\n", info.name);
    if (!info.source.empty()) text += fmt::format("  source:   {}\n", info.source);
    if (!info.feature_column.empty()) text += fmt::format("  features: {}\n", info.feature_column);
    if (!info.label_column.empty()) text += fmt::format("  label:    {}\n", info.label_column);
    for (const SplitInfo& split : info.splits) {
        text += fmt::format("  split {}: {} samples\n", split.name, split.rows);
        for (const ColumnInfo& column : split.columns) {
            text += fmt::format("    {:<12} {:<4} {:<20} {}", column.name, column_type_name(column.type),
                                shape_text(column, split.rows),
                                column.chunk_rows ? fmt::format("chunks of {} rows", column.chunk_rows)
                                                  : std::string("contiguous"));
            if (!column.source.empty()) text += fmt::format("  from {}", column.source);
            text += "\n";
        }
    }
    return text;
}

}  // namespace trainrt::data
