// comm/gpu.hpp in a build with CUDA: each call goes to libtrainrt_cuda, loaded on the first one.
#include "comm/gpu.hpp"

#include <fmt/format.h>

#include "comm/gpu_component.hpp"
#include "trainrt/error.hpp"

namespace trainrt::comm {
namespace {

const GpuApi& api() {
    static const GpuApi& table = *static_cast<const GpuApi*>(cuda_component_symbol("trainrt_cuda_gpu_api"));
    return table;
}

}  // namespace

// `trainrt --version` reports a component that cannot be loaded instead of failing.
std::string gpu_build_info() {
    try {
        return api().build_info();
    } catch (const ConfigError& error) {
        return fmt::format("built, but unusable here ({})", error.what());
    }
}

int visible_gpu_count(std::string* why) { return api().visible_gpu_count(why); }

void bind_device(int device) { api().bind_device(device); }

std::string current_device_bus_id() { return api().current_device_bus_id(); }

std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap) {
    return api().make_nccl_communicator(bootstrap);
}

std::unique_ptr<Communicator> make_dispatch_communicator(std::unique_ptr<Communicator> mpi,
                                                         std::unique_ptr<Communicator> nccl) {
    return api().make_dispatch_communicator(std::move(mpi), std::move(nccl));
}

void* collective_stream(Communicator& comm) { return api().collective_stream(comm); }

void enqueue_device_allreduce(Communicator& comm, void* device_data, std::size_t count, DType dtype,
                              ReduceOp op) {
    api().enqueue_device_allreduce(comm, device_data, count, dtype, op);
}

void wait_collective_event(Communicator& comm, void* cuda_event, const char* what) {
    api().wait_collective_event(comm, cuda_event, what);
}

}  // namespace trainrt::comm
