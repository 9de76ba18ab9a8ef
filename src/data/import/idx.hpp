#pragma once
// IDX files (the MNIST/FashionMNIST format), gzip-compressed as Debian ships them.
#include <cstdint>
#include <string>
#include <vector>

namespace trainrt::data {

struct IdxArray {
    std::vector<std::uint32_t> dims;  // e.g. {60000, 28, 28}
    std::vector<std::uint8_t> values;
};

// Reads an unsigned-byte IDX file (.gz or plain). A missing, truncated or malformed file is a
// DataError naming the file and what is wrong.
IdxArray read_idx(const std::string& path);

}  // namespace trainrt::data
