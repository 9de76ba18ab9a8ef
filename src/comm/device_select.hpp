#pragma once
// Which GPU a rank takes (scaling.use_gpu = true): pure logic, tested without a GPU.
//  - one visible device (Slurm's --gpus-per-task=1 or a CUDA_VISIBLE_DEVICES narrowed per task):
//    that device, whatever the local rank;
//  - at least as many visible devices as ranks on the node: device = local rank;
//  - fewer: an error (NCCL needs a GPU of its own per rank);
//  - none: an error saying so.
// Ranks that end up on the same physical GPU anyway (all of a node's ranks see one shared GPU)
// are caught by comparing PCI bus ids before NCCL starts (runtime/gpu_setup.cpp).
// The visible count is CUDA's, which already honours CUDA_VISIBLE_DEVICES.
#include <string>

namespace trainrt::comm {

struct DeviceRequest {
    int world_rank = 0;
    int local_rank = 0;
    int local_size = 1;
    int visible_devices = 0;
    std::string visible_env;  // CUDA_VISIBLE_DEVICES as set ("" when unset), for messages
    std::string why_none;     // why CUDA reports no device (driver missing...), for messages
};

int select_device(const DeviceRequest& request);  // ConfigError (one line) when impossible

}  // namespace trainrt::comm
