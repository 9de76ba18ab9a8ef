// comm/gpu.hpp with CUDA and NCCL, inside libtrainrt_cuda: device discovery and binding.
#include "comm/cuda/gpu_impl.hpp"

#include <fmt/format.h>

#include "comm/cuda/cuda_check.hpp"

namespace trainrt::comm::cuda {

std::string gpu_build_info() {
    int nccl = 0;
    ncclGetVersion(&nccl);
    return fmt::format("CUDA {}.{}, NCCL {}.{}.{}", CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10,
                       nccl / 10000, (nccl % 10000) / 100, nccl % 100);
}

int visible_gpu_count(std::string* why) {
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        if (why) *why = fmt::format("cudaGetDeviceCount: {}", cudaGetErrorString(status));
        cudaGetLastError();  // clear the sticky-free error so later calls start clean
        return 0;
    }
    return count;
}

void bind_device(int device) { TRAINRT_CUDA_CHECK(cudaSetDevice(device)); }

std::string current_device_bus_id() {
    int device = 0;
    TRAINRT_CUDA_CHECK(cudaGetDevice(&device));
    char bus_id[32] = {};
    TRAINRT_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
    return bus_id;
}

}  // namespace trainrt::comm::cuda
