#include "comm/cuda/cuda_check.hpp"

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::comm {

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
    throw CommError(fmt::format("cuda: {} failed: {} ({}) at {}:{}", call, cudaGetErrorString(code),
                                cudaGetErrorName(code), file, line));
}

void throw_nccl_error(ncclResult_t code, ncclComm_t comm, const char* call, const char* file, int line) {
    const char* last = comm != nullptr ? ncclGetLastError(comm) : ncclGetLastError(nullptr);
    throw CommError(fmt::format("nccl: {} failed: {}{}{} at {}:{}", call, ncclGetErrorString(code),
                                last != nullptr && *last != '\0' ? ": " : "", last != nullptr ? last : "",
                                file, line));
}

}  // namespace trainrt::comm
