#pragma once
// Move-only owners of CUDA and NCCL handles; destructors never throw.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <utility>

namespace trainrt::comm {

template <class Handle, class Release>
class CudaOwner {
public:
    CudaOwner() = default;
    explicit CudaOwner(Handle handle) : handle_(handle) {}
    ~CudaOwner() { reset(); }
    CudaOwner(CudaOwner&& other) noexcept : handle_(std::exchange(other.handle_, Handle{})) {}
    CudaOwner& operator=(CudaOwner&& other) noexcept {
        if (this != &other) {
            reset();
            handle_ = std::exchange(other.handle_, Handle{});
        }
        return *this;
    }
    CudaOwner(const CudaOwner&) = delete;
    CudaOwner& operator=(const CudaOwner&) = delete;
    Handle get() const { return handle_; }
    Handle release() { return std::exchange(handle_, Handle{}); }
    void reset() noexcept {
        if (handle_ != Handle{}) Release{}(handle_);
        handle_ = Handle{};
    }

private:
    Handle handle_{};
};

struct DestroyStream {
    void operator()(cudaStream_t stream) const noexcept { cudaStreamDestroy(stream); }
};
struct DestroyEvent {
    void operator()(cudaEvent_t event) const noexcept { cudaEventDestroy(event); }
};
struct FreeDevice {
    void operator()(void* pointer) const noexcept { cudaFree(pointer); }
};
struct FreeHost {
    void operator()(void* pointer) const noexcept { cudaFreeHost(pointer); }
};
struct DestroyGraphExec {
    void operator()(cudaGraphExec_t exec) const noexcept { cudaGraphExecDestroy(exec); }
};
// A communicator whose peers may be gone cannot be destroyed collectively: abort it.
struct AbortNccl {
    void operator()(ncclComm_t comm) const noexcept { ncclCommAbort(comm); }
};

using CudaStream = CudaOwner<cudaStream_t, DestroyStream>;
using CudaEvent = CudaOwner<cudaEvent_t, DestroyEvent>;
using DeviceMemory = CudaOwner<void*, FreeDevice>;
using NcclComm = CudaOwner<ncclComm_t, AbortNccl>;
using PinnedMemory = CudaOwner<void*, FreeHost>;
using GraphExec = CudaOwner<cudaGraphExec_t, DestroyGraphExec>;

CudaStream make_stream();
CudaEvent make_event();
DeviceMemory device_alloc(std::size_t bytes);
PinnedMemory pinned_alloc(std::size_t bytes);  // page-locked host memory (cudaMallocHost)

}  // namespace trainrt::comm
