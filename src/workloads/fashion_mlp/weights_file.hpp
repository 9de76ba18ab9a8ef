#pragma once
// The init_weights file: float32 datasets fc1.weight [512,784], fc1.bias [512], ..., fc3.bias
// [10] at the root, PyTorch's [out, in] layout (hdf5_schemas/mlp_weights.md).
#include <string>

#include "workloads/fashion_mlp/mlp.hpp"

namespace trainrt::workloads::fashion_mlp {

// Throws WorkloadError naming the tensor when one is missing or has the wrong shape.
void load_weights(const std::string& path, Mlp& model);
void save_weights(const std::string& path, const Mlp& model);

}  // namespace trainrt::workloads::fashion_mlp
