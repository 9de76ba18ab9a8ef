#pragma once
// Where a rank's LibTorch tensors live (trainrt::torch::device): the rule, for code that holds a
// Context rather than a Session (StateDict's generators).
#include <ATen/ATen.h>

#include "trainrt/context.hpp"

namespace trainrt::torch {

// CUDA device context.gpu_device, or the CPU when it is -1; a ConfigError when a GPU is bound but
// this LibTorch has no CUDA.
at::Device device_of(const Context& context);

// The default generator of that CUDA device (context.gpu_device >= 0).
at::Generator cuda_generator(const Context& context);

}  // namespace trainrt::torch
