#include "comm/device_select.hpp"

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::comm {

int select_device(const DeviceRequest& request) {
    const std::string visible = request.visible_env.empty() ? "unset" : "'" + request.visible_env + "'";
    if (request.visible_devices <= 0)
        throw ConfigError(fmt::format(
            "gpu: scaling.use_gpu = true but rank {} sees no CUDA device (CUDA_VISIBLE_DEVICES {}{}); "
            "run on a GPU node (e.g. sbatch --gpus-per-task=1) or set use_gpu = false",
            request.world_rank, visible, request.why_none.empty() ? "" : "; " + request.why_none));
    if (request.visible_devices == 1) return 0;
    if (request.visible_devices >= request.local_size) return request.local_rank;
    throw ConfigError(fmt::format(
        "gpu: {} ranks on this node but {} visible GPUs (CUDA_VISIBLE_DEVICES {}); NCCL needs one GPU "
        "per rank: launch {} ranks per node (srun --ntasks-per-node={} --gpus-per-task=1)",
        request.local_size, request.visible_devices, visible, request.visible_devices,
        request.visible_devices));
}

}  // namespace trainrt::comm
