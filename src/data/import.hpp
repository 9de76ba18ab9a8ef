#pragma once
// `trainrt data import fashion-mnist`: IDX files -> one HDF5 file (hdf5_schemas/dataset.md).
#include <string>

namespace trainrt::data {

inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

struct ImportSummary {
    std::size_t train_count = 0;
    std::size_t test_count = 0;
};

// Writes `out` atomically (a temporary file renamed into place): an interrupted import never
// leaves a half-written dataset behind.
ImportSummary import_fashion_mnist(const std::string& from_dir, const std::string& out);

}  // namespace trainrt::data
