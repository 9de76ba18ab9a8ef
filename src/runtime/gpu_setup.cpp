#include "runtime/gpu_setup.hpp"

#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "comm/device_select.hpp"
#include "comm/gpu.hpp"
#include "comm/strings.hpp"
#include "trainrt/error.hpp"
#include "log/log.hpp"

namespace trainrt::runtime {

int bind_gpu(const ScalingSettings& settings, const Context& context) {
    const Backend backend = settings.backend.value;
    if (!settings.use_gpu.value) {
        if (backend == Backend::nccl)
            throw ConfigError(fmt::format("config: {} needs {} = true", settings.backend.stated("nccl"),
                                          settings.use_gpu.key));
        return -1;
    }
    if (backend == Backend::mpi)
        throw ConfigError(fmt::format("config: {} cannot reduce GPU buffers: this MPICH is not CUDA-aware; "
                                      "use auto or nccl", settings.backend.stated("mpi")));
    comm::DeviceRequest request;
    request.world_rank = context.world_rank;
    request.local_rank = context.local_rank;
    request.local_size = context.local_size;
    request.visible_devices = comm::visible_gpu_count(&request.why_none);
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    request.visible_env = visible != nullptr ? visible : "";
    const int device = comm::select_device(request);
    comm::bind_device(device);
    return device;
}

namespace {

// Collective: ConfigError on every rank when two ranks of one host bound the same physical GPU
// (NCCL would refuse with "Duplicate GPU detected").
void check_distinct_gpus(Communicator& mpi, const Context& context) {
    const std::vector<std::string> gpus =
        comm::allgather_strings(mpi, context.hostname + " " + comm::current_device_bus_id());
    for (std::size_t a = 0; a < gpus.size(); ++a)
        for (std::size_t b = a + 1; b < gpus.size(); ++b)
            if (gpus[a] == gpus[b]) {
                ConfigError error(fmt::format(
                    "gpu: ranks {} and {} share GPU {}; NCCL needs one GPU per rank: give each task its "
                    "own (srun --gpus-per-task=1) or launch fewer ranks per node", a, b, gpus[a]));
                error.set_on_all_ranks();
                throw error;
            }
}

}  // namespace

std::unique_ptr<Communicator> session_communicator(const ScalingSettings& settings, const Context& context,
                                                   std::unique_ptr<Communicator> mpi) {
    if (!settings.use_gpu.value) return mpi;
    check_distinct_gpus(*mpi, context);
    std::unique_ptr<Communicator> nccl = comm::make_nccl_communicator(*mpi);
    if (mpi->rank() == 0)
        log::info("GPU run: {}; NCCL communicator over {} ranks", comm::gpu_build_info(), mpi->size());
    return comm::make_dispatch_communicator(std::move(mpi), std::move(nccl));
}

}  // namespace trainrt::runtime
