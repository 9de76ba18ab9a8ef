// trainrt::torch::device: the rank's device for LibTorch tensors.
#include "torch/device.hpp"

#include <torch/version.h>

#include <fmt/format.h>

#include "trainrt/error.hpp"
#include "trainrt/torch.hpp"

namespace trainrt::torch {

at::Device device_of(const Context& context) {
    if (context.gpu_device < 0) return at::Device(at::kCPU);
    if (!at::hasCUDA())
        throw ConfigError(fmt::format(
            "torch: scaling.use_gpu = true, but the LibTorch this trainrt's LibTorch component was built against "
            "({}) has no CUDA (Debian's libtorch is CPU-only); build libtrainrt_torch against a CUDA LibTorch "
            "(bench/gpu/build_torch_on_gpu.sh) or set scaling.use_gpu = false", TORCH_VERSION));
    return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(context.gpu_device));
}

at::Generator cuda_generator(const Context& context) {
    return at::globalContext().defaultGenerator(device_of(context));
}

at::Device device(const Session& session) { return device_of(session.context()); }

}  // namespace trainrt::torch
