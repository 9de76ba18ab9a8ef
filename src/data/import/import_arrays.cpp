// Columns already in memory (Ray Data's datasets as trainrt.data builds them) into a dataset file:
// the same checks as the other importers (one length per split, valid and unique names, at least
// one row), all before the output exists; written under a temporary name and renamed.
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data/dataset_writer.hpp"
#include "data/import/importers.hpp"
#include "trainrt/error.hpp"

namespace trainrt::data {
namespace {

void check_split(const ArraySplit& split) {
    if (split.name.empty() || split.name.find('/') != std::string::npos)
        throw DataError(fmt::format("datasets: '{}' cannot name a dataset (non-empty, no '/')", split.name));
    if (split.columns.empty()) throw DataError(fmt::format("datasets: dataset '{}' has no columns", split.name));
    std::set<std::string> seen;
    for (const ArrayColumn& column : split.columns) {
        if (column.name.empty() || column.name.find('/') != std::string::npos || !seen.insert(column.name).second)
            throw DataError(fmt::format("datasets: dataset '{}': column name '{}' is empty, holds '/' or comes "
                                        "twice: rename it (rename_columns)", split.name, column.name));
        if (column.rows != split.columns.front().rows)
            throw DataError(fmt::format("datasets: dataset '{}': column '{}' has {} rows, column '{}' has {}: every "
                                        "column of a dataset needs one length", split.name, column.name, column.rows,
                                        split.columns.front().name, split.columns.front().rows));
    }
    if (split.columns.front().rows == 0)
        throw DataError(fmt::format("datasets: dataset '{}' has no rows (after its filters): give it rows, or leave "
                                    "it out of datasets=", split.name));
}

std::size_t sample_elements(const ArrayColumn& column) {
    std::size_t elements = 1;
    for (std::size_t extent : column.sample_shape) elements *= extent;
    return elements;
}

}  // namespace

void write_arrays(const std::string& out, const std::vector<ArraySplit>& splits, const std::string& source) {
    if (splits.empty()) throw DataError("datasets: no datasets to write");
    std::set<std::string> names;
    for (const ArraySplit& split : splits) {
        check_split(split);
        if (!names.insert(split.name).second)
            throw DataError(fmt::format("datasets: dataset '{}' is given twice", split.name));
    }
    DatasetWriter writer(out, 0);
    writer.describe("datasets", source, "", "");
    for (const ArraySplit& split : splits)
        for (const ArrayColumn& column : split.columns) {
            ColumnWriter& columns = writer.add_column(split.name, {column.name, column.type, column.sample_shape,
                                                                   column.rows, source});
            if (column.rows > 0 && sample_elements(column) > 0) columns.append(column.data, column.rows);
        }
    writer.commit();
}

}  // namespace trainrt::data
