#pragma once
// Every CUDA and NCCL call goes through these checks: a failure becomes a CommError naming the
// call, with the library's own error text (and NCCL's last error message).
#include <cuda_runtime.h>
#include <nccl.h>

namespace trainrt::comm {

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);
[[noreturn]] void throw_nccl_error(ncclResult_t code, ncclComm_t comm, const char* call,
                                   const char* file, int line);

}  // namespace trainrt::comm

#define TRAINRT_CUDA_CHECK(call)                                                         \
    do {                                                                                 \
        cudaError_t trainrt_cuda_rc_ = (call);                                           \
        if (trainrt_cuda_rc_ != cudaSuccess)                                             \
            ::trainrt::comm::throw_cuda_error(trainrt_cuda_rc_, #call, __FILE__, __LINE__); \
    } while (0)

#define TRAINRT_NCCL_CHECK(nccl_handle, call)                                                         \
    do {                                                                                       \
        ncclResult_t trainrt_nccl_rc_ = (call);                                                \
        if (trainrt_nccl_rc_ != ncclSuccess)                                                   \
            ::trainrt::comm::throw_nccl_error(trainrt_nccl_rc_, nccl_handle, #call, __FILE__, __LINE__); \
    } while (0)
