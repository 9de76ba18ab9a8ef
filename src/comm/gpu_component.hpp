#pragma once
// The CUDA component, libtrainrt_cuda: every CUDA, cuBLAS and NCCL call of trainrt lives there
// (src/*/cuda/), installed beside libtrainrt and loaded on the first GPU call (src/*/cuda_component/
// forwards comm/gpu.hpp to it), so a CPU job never loads CUDA's libraries: mapping and
// initialising them costs every process ~0.4 s, whether or not it touches a GPU.
// The component exports one table per room as extern "C" data, checked by its ABI number.
#include <cstddef>
#include <memory>
#include <string>

#include "trainrt/comm.hpp"

namespace trainrt::comm {

// Bumped whenever a table below changes.
inline constexpr int kGpuComponentAbi = 1;

// comm/gpu.hpp's functions, as libtrainrt_cuda implements them (symbol trainrt_cuda_gpu_api).
struct GpuApi {
    int abi;
    std::string (*build_info)();
    int (*visible_gpu_count)(std::string* why);
    void (*bind_device)(int device);
    std::string (*current_device_bus_id)();
    std::unique_ptr<Communicator> (*make_nccl_communicator)(Communicator& bootstrap);
    std::unique_ptr<Communicator> (*make_dispatch_communicator)(std::unique_ptr<Communicator> mpi,
                                                                std::unique_ptr<Communicator> nccl);
    void* (*collective_stream)(Communicator& comm);
    void (*enqueue_device_allreduce)(Communicator& comm, void* device_data, std::size_t count, DType dtype,
                                     ReduceOp op);
    void (*wait_collective_event)(Communicator& comm, void* cuda_event, const char* what);
};

// Loads libtrainrt_cuda (once per process) and returns its symbol `name`, which must carry
// kGpuComponentAbi in its first int. ConfigError (one line: the file, the loader's reason, what to
// do) when the library is missing, cannot be loaded or is of another ABI.
const void* cuda_component_symbol(const char* name);

}  // namespace trainrt::comm
