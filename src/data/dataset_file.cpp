#include "data/dataset_file.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data/h5_types.hpp"
#include "h5/h5.hpp"
#include "h5/io.hpp"
#include "trainrt/error.hpp"

namespace trainrt::data {
namespace {

std::string string_attribute_or(hid_t object, const std::string& name, const std::string& fallback) {
    return h5::has_attribute(object, name) ? h5::read_string_attribute(object, name) : fallback;
}

std::size_t chunk_rows(hid_t dataset) {
    const std::vector<hsize_t> dims = h5::chunk_dims(dataset, "chunk dims");
    return dims.empty() ? 0 : static_cast<std::size_t>(dims[0]);
}

ColumnInfo read_column(hid_t group, const std::string& split, const std::string& name,
                       const std::string& path) {
    h5::Dataset dataset = h5::open_dataset(group, name);
    h5::Datatype type = h5::dataset_type(dataset.get(), name);
    std::string why;
    auto column_type = column_type_for(type.get(), why);
    if (!column_type)
        throw DataError(fmt::format("data: {}: column /{}/{}: {}", path, split, name, why));
    std::vector<hsize_t> shape = h5::dataset_shape(dataset.get());
    if (shape.empty())
        throw DataError(fmt::format("data: {}: column /{}/{} is a scalar; a column's first dimension is "
                                    "the sample", path, split, name));
    ColumnInfo column;
    column.name = name;
    column.type = *column_type;
    column.sample_shape.assign(shape.begin() + 1, shape.end());
    column.chunk_rows = chunk_rows(dataset.get());
    column.source = string_attribute_or(dataset.get(), "source", "");
    if (h5::has_attribute(dataset.get(), "mean") && h5::has_attribute(dataset.get(), "std")) {
        column.mean = h5::read_double_array_attribute(dataset.get(), "mean");
        column.std = h5::read_double_array_attribute(dataset.get(), "std");
    }
    if (h5::has_attribute(dataset.get(), "num_classes"))
        column.num_classes = h5::read_int_attribute(dataset.get(), "num_classes");
    return column;
}

SplitInfo read_split(hid_t file, const std::string& name, const std::string& path) {
    h5::Group group = h5::open_group(file, name);
    SplitInfo split;
    split.name = name;
    split.source = string_attribute_or(group.get(), "source", "");
    bool first = true;
    for (const h5::Member& member : h5::list_members(group.get())) {
        if (!member.is_dataset) continue;
        split.columns.push_back(read_column(group.get(), name, member.name, path));
        h5::Dataset dataset = h5::open_dataset(group.get(), member.name);
        const std::size_t rows = static_cast<std::size_t>(h5::dataset_shape(dataset.get())[0]);
        if (!first && rows != split.rows)
            throw DataError(fmt::format("data: {}: columns of split '{}' disagree in length: {} has {} rows, "
                                        "{} has {}; re-create the file with `trainrt data import`",
                                        path, name, split.columns.front().name, split.rows, member.name, rows));
        split.rows = rows;
        first = false;
    }
    if (split.columns.empty())
        throw DataError(fmt::format("data: {}: split '{}' holds no columns", path, name));
    return split;
}

void check_format(hid_t file, const std::string& path, DatasetInfo& info) {
    const std::string format = string_attribute_or(file, "format", "");
    if (format != kDatasetFormat)
        throw DataError(fmt::format("data: {} is not a trainrt dataset (its format attribute is '{}'); "
                                    "create one with `trainrt data import`", path, format));
    info.version = h5::has_attribute(file, "format_version") ? h5::read_int_attribute(file, "format_version") : 1;
    if (info.version < 1 || info.version > kDatasetFormatVersion)
        throw DataError(fmt::format("data: {} has dataset format version {}; this trainrt reads versions 1 to "
                                    "{}: use a newer trainrt or re-import the data", path, info.version,
                                    kDatasetFormatVersion));
}

void read_layout(hid_t file, DatasetInfo& info) {
    check_format(file, info.path, info);
    info.name = string_attribute_or(file, "name", "");
    info.source = string_attribute_or(file, "source", "");
    for (const h5::Member& member : h5::list_members(file))
        if (member.is_group) info.splits.push_back(read_split(file, member.name, info.path));
    const bool fashion = info.version == 1;  // v1 files are FashionMNIST's images and labels
    info.feature_column = string_attribute_or(file, "feature_column", fashion ? "images" : "");
    info.label_column = string_attribute_or(file, "label_column", fashion ? "labels" : "");
}

}  // namespace

const ColumnInfo* SplitInfo::find(const std::string& column) const {
    for (const ColumnInfo& info : columns)
        if (info.name == column) return &info;
    return nullptr;
}

const SplitInfo* DatasetInfo::find(const std::string& split) const {
    for (const SplitInfo& info : splits)
        if (info.name == split) return &info;
    return nullptr;
}

std::vector<std::string> DatasetInfo::split_names() const {
    std::vector<std::string> names;
    for (const SplitInfo& info : splits) names.push_back(info.name);
    return names;
}

const SplitInfo& DatasetInfo::split(const std::string& name) const {
    if (const SplitInfo* found = find(name)) return *found;
    throw DataError(fmt::format("data: {} has no split '{}' (it has: {}); import one with `trainrt data import "
                                "... --split`", path, name, fmt::join(split_names(), ", ")));
}

const ColumnInfo& find_column(const DatasetInfo& info, const SplitInfo& split, const std::string& column) {
    if (const ColumnInfo* found = split.find(column)) return *found;
    std::vector<std::string> names;
    for (const ColumnInfo& c : split.columns) names.push_back(c.name);
    throw DataError(fmt::format("data: {}: split '{}' has no column '{}' (it has: {})", info.path, split.name,
                                column, fmt::join(names, ", ")));
}

DatasetInfo read_dataset_info(const std::string& path) {
    if (!std::filesystem::exists(path))
        throw DataError(fmt::format("data: dataset file {} does not exist; create it with `trainrt data import` "
                                    "(e.g. `trainrt data import fashion-mnist --out {}`)", path, path));
    DatasetInfo info;
    info.path = path;
    h5::File file;
    try {
        file = h5::open_file(path, false);
    } catch (const H5Error& error) {
        throw DataError(fmt::format("data: {} is not a trainrt dataset: HDF5 cannot open it ({}); create it with "
                                    "`trainrt data import`", path, error.what()));
    }
    try {
        read_layout(file.get(), info);
    } catch (const H5Error& error) {
        throw DataError(fmt::format("data: {} is damaged or not a trainrt dataset ({}); re-create it with "
                                    "`trainrt data import`", path, error.what()));
    }
    return info;
}

}  // namespace trainrt::data
