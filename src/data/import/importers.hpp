#pragma once
// `trainrt data import`: CSV, NumPy (.npy/.npz), HDF5 and IDX (FashionMNIST, MNIST) into a
// dataset file (hdf5_schemas/dataset.md, version 2). Every importer checks all of its input
// before the output exists, writes it under a temporary name and renames it: input that does not
// fit (ragged rows, non-numeric cells, mixed lengths, empty files, a column name twice) is one
// DataError (exit 6) and nothing is written.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "data/import/csv_source.hpp"
#include "data/import/import_common.hpp"
#include "trainrt/data.hpp"

namespace trainrt::data {

inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// What an import wrote, for its one summary line.
struct ImportReport {
    std::string what;                                          // e.g. "30 features (f32) + label 'c30' (i64)"
    std::vector<std::pair<std::string, std::uint64_t>> splits; // name, rows
    std::string out;                                           // the file written
};

struct CsvOptions {
    ImportOptions common;
    CsvFormat format;
    std::string columns;      // feature columns, comma-separated names or 0-based indices ("" = all but the label)
    std::string label_file;   // labels from this one-column file instead, row for row
    std::string dtype = "f32";       // features: f32 | f64
    std::string label_type = "auto"; // auto (i64 when every label is written as an integer) | int | float
};
ImportReport import_csv(const std::vector<std::string>& files, const CsvOptions& options);

// Each .npy file is a column named after its stem; each array of an .npz is a column named after
// its key. --label names the label column; --features the feature column (default: the other one
// when there are two).
struct NpyOptions {
    ImportOptions common;
    std::string features;
};
ImportReport import_npy(const std::vector<std::string>& files, const NpyOptions& options);

// Datasets picked by path (`/a/b` or `name=/a/b`), the first dimension the sample.
struct Hdf5Options {
    ImportOptions common;
    std::string columns;
    std::string features;
};
ImportReport import_hdf5(const std::string& file, const Hdf5Options& options);

// FashionMNIST or MNIST IDX files (train-*-ubyte[.gz], t10k-*-ubyte[.gz]) in `from_dir`:
// splits train and test, columns images (u8 [N, 28, 28]) and labels (u8 [N]), named --name or
// `kind`. --split, --seed and --label do not apply: ConfigError (exit 2) naming the option.
ImportReport import_idx(const std::string& kind, const std::string& from_dir, const ImportOptions& options);

// Columns in memory, row-major native values of their type: Ray Data's datasets, one split per
// dataset (trainrt.data; docs/guides/ray-data.md). DataError (nothing written) when a split has
// no rows, no columns, columns of different lengths, or a name twice.
struct ArrayColumn {
    std::string name;
    ColumnType type = ColumnType::f32;
    std::vector<std::size_t> sample_shape;  // {} for a scalar per row
    std::uint64_t rows = 0;
    const void* data = nullptr;
};
struct ArraySplit {
    std::string name;
    std::vector<ArrayColumn> columns;
};
void write_arrays(const std::string& out, const std::vector<ArraySplit>& splits, const std::string& source);

// `trainrt data info`: splits, columns, types, shapes, counts, chunking, sources.
std::string describe_dataset(const std::string& path);

}  // namespace trainrt::data
