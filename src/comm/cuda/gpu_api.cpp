// libtrainrt_cuda's comm table (comm/gpu_component.hpp), found by libtrainrt with dlsym.
#include "comm/cuda/gpu_impl.hpp"
#include "comm/gpu_component.hpp"

extern "C" {
extern const trainrt::comm::GpuApi trainrt_cuda_gpu_api;
const trainrt::comm::GpuApi trainrt_cuda_gpu_api = {
    trainrt::comm::kGpuComponentAbi,
    &trainrt::comm::cuda::gpu_build_info,
    &trainrt::comm::cuda::visible_gpu_count,
    &trainrt::comm::cuda::bind_device,
    &trainrt::comm::cuda::current_device_bus_id,
    &trainrt::comm::cuda::make_nccl_communicator,
    &trainrt::comm::cuda::make_dispatch_communicator,
    &trainrt::comm::cuda::collective_stream,
    &trainrt::comm::cuda::enqueue_device_allreduce,
    &trainrt::comm::cuda::wait_collective_event,
};
}
