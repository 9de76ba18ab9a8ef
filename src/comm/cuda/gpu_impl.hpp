#pragma once
// comm/gpu.hpp's functions as libtrainrt_cuda implements them, under their own namespace: the
// names in trainrt::comm are libtrainrt's forwarders (src/comm/cuda_component/), and the component
// must not bind to those. Contracts: comm/gpu.hpp.
#include <cstddef>
#include <memory>
#include <string>

#include "trainrt/comm.hpp"

namespace trainrt::comm::cuda {

std::string gpu_build_info();
int visible_gpu_count(std::string* why);
void bind_device(int device);
std::string current_device_bus_id();
std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap);
std::unique_ptr<Communicator> make_dispatch_communicator(std::unique_ptr<Communicator> mpi,
                                                         std::unique_ptr<Communicator> nccl);
void* collective_stream(Communicator& comm);
void enqueue_device_allreduce(Communicator& comm, void* device_data, std::size_t count, DType dtype,
                              ReduceOp op);
void wait_collective_event(Communicator& comm, void* cuda_event, const char* what);

}  // namespace trainrt::comm::cuda
