#include "runtime/gpu_setup.hpp"

#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "comm/device_select.hpp"
#include "comm/gpu.hpp"
#include "trainrt/error.hpp"

namespace trainrt::runtime {

void bind_gpu(const JobConfig& config, const Context& context) {
    const bool use_gpu = config.get_bool("scaling.use_gpu");
    const std::string backend = config.get("scaling.backend");
    if (!use_gpu) {
        if (backend == "nccl")
            throw ConfigError(fmt::format("config: scaling.backend = nccl ({}) needs scaling.use_gpu = true",
                                          config.source("scaling.backend")));
        return;
    }
    if (backend == "mpi")
        throw ConfigError(fmt::format("config: scaling.backend = mpi ({}) cannot reduce GPU buffers: this "
                                      "MPICH is not CUDA-aware; use auto or nccl", config.source("scaling.backend")));
    comm::DeviceRequest request;
    request.world_rank = context.world_rank;
    request.local_rank = context.local_rank;
    request.local_size = context.local_size;
    request.visible_devices = comm::visible_gpu_count(&request.why_none);
    request.allow_sharing = config.get_bool("scaling.gpu_sharing");
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    request.visible_env = visible != nullptr ? visible : "";
    comm::bind_device(comm::select_device(request));
}

std::unique_ptr<Communicator> session_communicator(const JobConfig& config, std::unique_ptr<Communicator> mpi) {
    if (!config.get_bool("scaling.use_gpu")) return mpi;
    std::unique_ptr<Communicator> nccl = comm::make_nccl_communicator(*mpi);
    if (mpi->rank() == 0)
        std::cout << "[trainrt] GPU run: " << comm::gpu_build_info() << "; NCCL communicator over "
                  << mpi->size() << " ranks" << std::endl;
    return comm::make_dispatch_communicator(std::move(mpi), std::move(nccl));
}

}  // namespace trainrt::runtime
