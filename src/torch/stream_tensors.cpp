// trainrt::torch::to_tensor (torch.hpp): a streamed batch's column as a LibTorch tensor.
#include <ATen/ATen.h>

#include <cstring>

#include "trainrt/torch.hpp"

namespace trainrt::torch {
namespace {

at::ScalarType scalar_type(ColumnType type) {
    switch (type) {
        case ColumnType::u8: return at::kByte;
        case ColumnType::i8: return at::kChar;
        case ColumnType::i16: return at::kShort;
        case ColumnType::i32: return at::kInt;
        case ColumnType::i64: return at::kLong;
        case ColumnType::f16: return at::kHalf;
        case ColumnType::f32: return at::kFloat;
        case ColumnType::f64: return at::kDouble;
    }
    return at::kByte;
}

}  // namespace

at::Tensor to_tensor(const BatchColumn& column) {
    std::vector<std::int64_t> sizes(column.shape().begin(), column.shape().end());
    at::Tensor tensor = at::empty(sizes, at::TensorOptions().dtype(scalar_type(column.type())));
    std::memcpy(tensor.data_ptr(), column.data(), column.bytes());
    return tensor;
}

}  // namespace trainrt::torch
