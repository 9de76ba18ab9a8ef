#pragma once
// The dataset file's layout (hdf5_schemas/dataset.md): what it holds and the checks every reader
// relies on. Version 2 holds splits of any numeric columns; version 1 (FashionMNIST's `images`
// and `labels`, uint8) is the same layout with fewer attributes and reads unchanged.
#include <cstdint>
#include <string>
#include <vector>

#include "trainrt/data.hpp"

namespace trainrt::data {

inline constexpr const char* kDatasetFormat = "trainrt-dataset";
inline constexpr std::int64_t kDatasetFormatVersion = 2;
inline constexpr int kFashionMnistClasses = 10;
inline constexpr const char* kFashionMnistClassNames =
    "T-shirt/top,Trouser,Pullover,Dress,Coat,Sandal,Shirt,Sneaker,Bag,Ankle boot";

struct SplitInfo {
    std::string name;
    std::size_t rows = 0;              // N, shared by its columns
    std::vector<ColumnInfo> columns;   // in name order
    std::string source;

    const ColumnInfo* find(const std::string& column) const;
};

struct DatasetInfo {
    std::string path;
    std::int64_t version = 1;
    std::string name;
    std::string source;
    std::string feature_column;  // "" when the file names none
    std::string label_column;
    std::vector<SplitInfo> splits;  // in name order

    const SplitInfo* find(const std::string& split) const;
    // The split, or a DataError naming the file and the splits it has.
    const SplitInfo& split(const std::string& name) const;
    std::vector<std::string> split_names() const;
};

// Reads and checks the layout: the format attribute, a known version, every split's columns
// numeric with one shared first dimension. DataError naming the file and what to do otherwise.
DatasetInfo read_dataset_info(const std::string& path);

// A split's column, or a DataError naming the file, the split and the columns it has.
const ColumnInfo& find_column(const DatasetInfo& info, const SplitInfo& split, const std::string& column);

}  // namespace trainrt::data
