#pragma once
// The GPU side of comm, the same interface whether or not this build has CUDA and NCCL
// (src/comm/cuda/ or src/comm/nocuda/ is compiled, chosen by CMake; build_config.hpp says which).
// Headers stay CUDA-free: streams travel as void*.
#include <memory>
#include <string>

#include "trainrt/comm.hpp"
#include "trainrt/context.hpp"

namespace trainrt::comm {

// "CUDA 13.0, NCCL 2.28.3" or "no".
std::string gpu_build_info();

// Devices CUDA lets this process see (CUDA_VISIBLE_DEVICES applied); 0 without CUDA or without
// a driver, with the reason in `why`.
int visible_gpu_count(std::string* why);

// Makes `device` this process's current device (cudaSetDevice). CommError on failure.
void bind_device(int device);

// The PCI bus id of the current device ("0000:3b:00.0"), to find ranks sharing one GPU.
std::string current_device_bus_id();

// An NCCL communicator over the same ranks as `bootstrap`: rank 0 creates the unique id and
// broadcasts it over `bootstrap` (MPI). One CUDA stream per communicator; collectives take device
// buffers and are enqueued on that stream; waits poll the stream and NCCL's async error, so a dead
// peer becomes a CommError (the communicator is aborted) instead of a hang.
std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap);

// backend = auto on a GPU run: device buffers go to `nccl`, host buffers to `mpi` (checked per
// call with cudaPointerGetAttributes). Owns both.
std::unique_ptr<Communicator> make_dispatch_communicator(std::unique_ptr<Communicator> mpi,
                                                         std::unique_ptr<Communicator> nccl);

// The CUDA stream (cudaStream_t) of the NCCL communicator inside `comm` (an NCCL or dispatch
// communicator): compute enqueued on it is ordered with the collectives. CommError otherwise.
void* collective_stream(Communicator& comm);

// Enqueues an in-place allreduce of a device buffer on collective_stream(comm) and returns at
// once, with no event and no wait: work enqueued after it on that stream sees the result. Legal
// while that stream is being captured into a CUDA graph (a training step captured once, replayed
// every step). CommError when `comm` holds no NCCL communicator.
void enqueue_device_allreduce(Communicator& comm, void* device_data, std::size_t count, DType dtype,
                              ReduceOp op);

// Blocks until `cuda_event` (a cudaEvent_t recorded on collective_stream(comm)) has completed,
// polling NCCL's asynchronous error under the collective watchdog, like every NCCL wait: a dead
// peer becomes a CommError (communicator aborted), never an endless wait.
void wait_collective_event(Communicator& comm, void* cuda_event, const char* what);

}  // namespace trainrt::comm
