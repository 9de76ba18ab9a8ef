#pragma once
// Constants of the dataset layout described in hdf5_schemas/dataset.md.
#include <cstdint>

namespace trainrt::data {

inline constexpr const char* kDatasetFormat = "trainrt-dataset";
inline constexpr std::int64_t kDatasetFormatVersion = 1;
inline constexpr int kFashionMnistClasses = 10;
inline constexpr const char* kFashionMnistClassNames =
    "T-shirt/top,Trouser,Pullover,Dress,Coat,Sandal,Shirt,Sneaker,Bag,Ankle boot";

}  // namespace trainrt::data
