// The NCCL communicator (comm/gpu.hpp) and the backend = auto dispatcher.
#include <sched.h>

#include <exception>
#include <string>

#include <fmt/format.h>

#include "comm/collective_watch.hpp"
#include "comm/cuda/cuda_check.hpp"
#include "comm/cuda/cuda_owners.hpp"
#include "comm/cuda/gpu_impl.hpp"
#include "trainrt/error.hpp"

namespace trainrt::comm {

CudaStream make_stream() {
    cudaStream_t stream = nullptr;
    TRAINRT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return CudaStream(stream);
}

CudaEvent make_event() {
    cudaEvent_t event = nullptr;
    TRAINRT_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    return CudaEvent(event);
}

DeviceMemory device_alloc(std::size_t bytes) {
    void* pointer = nullptr;
    TRAINRT_CUDA_CHECK(cudaMalloc(&pointer, bytes));
    return DeviceMemory(pointer);
}

PinnedMemory pinned_alloc(std::size_t bytes) {
    void* pointer = nullptr;
    TRAINRT_CUDA_CHECK(cudaMallocHost(&pointer, bytes));
    return PinnedMemory(pointer);
}

namespace {

ncclDataType_t nccl_type(DType dtype) {
    switch (dtype) {
        case DType::f32: return ncclFloat32;
        case DType::f64: return ncclFloat64;
        case DType::i64: return ncclInt64;
        case DType::i32: return ncclInt32;
        case DType::u8: return ncclUint8;
    }
    throw CommError("nccl: unknown dtype");
}

ncclRedOp_t nccl_op(ReduceOp op) {
    switch (op) {
        case ReduceOp::sum: return ncclSum;
        case ReduceOp::mean: return ncclAvg;
        case ReduceOp::max: return ncclMax;
        case ReduceOp::min: return ncclMin;
    }
    throw CommError("nccl: unknown reduce op");
}

// NCCL's asynchronous error (a peer died, a network failure): the communicator is aborted at
// once — that also stops its kernels, so later CUDA calls (frees, syncs) cannot hang on them —
// and the error becomes a CommError with NCCL's text.
void check_async(NcclComm& comm, const char* what) {
    if (comm.get() == nullptr) throw CommError(std::string("nccl: ") + what + ": the communicator was aborted earlier");
    ncclResult_t async = ncclSuccess;
    TRAINRT_NCCL_CHECK(comm.get(), ncclCommGetAsyncError(comm.get(), &async));
    if (async == ncclSuccess || async == ncclInProgress) return;
    std::string message;
    try {
        throw_nccl_error(async, comm.get(), what, __FILE__, __LINE__);
    } catch (const CommError& error) {
        message = error.what();
    }
    comm.reset();  // ncclCommAbort
    throw CommError(message + " (communicator aborted)");
}

// Waits for `event` by polling (the core stays free for other ranks), checking NCCL's async error
// on every round: a dead peer turns into a CommError, not an endless wait.
void wait_event(cudaEvent_t event, NcclComm& comm, const char* what) {
    CollectiveScope watched(what);
    for (;;) {
        cudaError_t status = cudaEventQuery(event);
        if (status == cudaSuccess) return;
        if (status != cudaErrorNotReady) TRAINRT_CUDA_CHECK(status);
        check_async(comm, what);
        sched_yield();
    }
}

// Lives no longer than the communicator that made it (the GradientReducer/engine pattern).
class NcclWork final : public Work {
public:
    NcclWork(CudaEvent event, NcclComm& comm) : event_(std::move(event)), comm_(comm) {}
    void wait() override {
        if (!done_) wait_event(event_.get(), comm_, "nccl allreduce (async)");
        done_ = true;
    }
    bool test() override {
        if (done_) return true;
        cudaError_t status = cudaEventQuery(event_.get());
        if (status == cudaErrorNotReady) {
            check_async(comm_, "nccl allreduce (async)");
            return false;
        }
        TRAINRT_CUDA_CHECK(status);
        return done_ = true;
    }

private:
    CudaEvent event_;
    NcclComm& comm_;
    bool done_ = false;
};

class NcclCommunicator final : public Communicator {
public:
    explicit NcclCommunicator(Communicator& bootstrap)
        : rank_(bootstrap.rank()), size_(bootstrap.size()), stream_(make_stream()),
          scratch_(device_alloc(sizeof(std::int64_t))) {
        ncclUniqueId id{};
        if (rank_ == 0) TRAINRT_NCCL_CHECK(nullptr, ncclGetUniqueId(&id));
        bootstrap.broadcast(&id, sizeof id, 0);
        ncclComm_t comm = nullptr;
        TRAINRT_NCCL_CHECK(nullptr, ncclCommInitRank(&comm, size_, id, rank_));
        comm_ = NcclComm(comm);
    }
    // A healthy communicator is destroyed; one that failed was aborted already (check_async),
    // and NcclComm aborts whatever is left on other paths.
    ~NcclCommunicator() override {
        if (comm_.get() != nullptr && std::uncaught_exceptions() == 0) ncclCommDestroy(comm_.release());
    }
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::string backend() const override { return "nccl"; }
    cudaStream_t stream() const { return stream_.get(); }

    using Communicator::allreduce;
    // Blocking collectives reuse one event: no event is created per call.
    void allreduce(void* data, std::size_t count, DType dtype, ReduceOp op) override {
        enqueue_allreduce(data, count, dtype, op);
        wait_recorded("nccl allreduce");
    }
    std::unique_ptr<Work> allreduce_async(void* data, std::size_t count, DType dtype, ReduceOp op) override {
        enqueue_allreduce(data, count, dtype, op);
        return std::make_unique<NcclWork>(recorded(), comm_);
    }
    void broadcast(void* data, std::size_t bytes, int root) override {
        TRAINRT_NCCL_CHECK(comm_.get(), ncclBroadcast(data, data, bytes, ncclUint8, root, comm_.get(), stream_.get()));
        wait_recorded("nccl broadcast");
    }
    void allgather(const void* send, void* recv, std::size_t bytes_per_rank) override {
        TRAINRT_NCCL_CHECK(comm_.get(), ncclAllGather(send, recv, bytes_per_rank, ncclUint8, comm_.get(), stream_.get()));
        wait_recorded("nccl allgather");
    }
    void barrier() override { allreduce(scratch_.get(), 1, DType::i64, ReduceOp::sum); }

    void enqueue_allreduce(void* data, std::size_t count, DType dtype, ReduceOp op) {
        if (comm_.get() == nullptr) throw CommError("nccl: allreduce: the communicator was aborted earlier");
        TRAINRT_NCCL_CHECK(comm_.get(), ncclAllReduce(data, data, count, nccl_type(dtype), nccl_op(op),
                                                      comm_.get(), stream_.get()));
    }
    void wait(cudaEvent_t event, const char* what) { wait_event(event, comm_, what); }

private:
    CudaEvent recorded() {
        CudaEvent event = make_event();
        TRAINRT_CUDA_CHECK(cudaEventRecord(event.get(), stream_.get()));
        return event;
    }
    void wait_recorded(const char* what) {
        TRAINRT_CUDA_CHECK(cudaEventRecord(done_.get(), stream_.get()));
        wait_event(done_.get(), comm_, what);
    }
    int rank_;
    int size_;
    CudaStream stream_;
    CudaEvent done_ = make_event();
    DeviceMemory scratch_;
    NcclComm comm_;
};

bool on_device(const void* pointer) {
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
        cudaGetLastError();  // plain host memory on old drivers: not an error
        return false;
    }
    return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

class DispatchCommunicator final : public Communicator {
public:
    DispatchCommunicator(std::unique_ptr<Communicator> mpi, std::unique_ptr<Communicator> nccl)
        : mpi_(std::move(mpi)), nccl_(std::move(nccl)) {}
    int rank() const override { return mpi_->rank(); }
    int size() const override { return mpi_->size(); }
    std::string backend() const override { return "auto (nccl for device buffers, mpi for host)"; }
    Communicator& nccl() { return *nccl_; }

    using Communicator::allreduce;
    void allreduce(void* data, std::size_t count, DType dtype, ReduceOp op) override {
        pick(data).allreduce(data, count, dtype, op);
    }
    std::unique_ptr<Work> allreduce_async(void* data, std::size_t count, DType dtype, ReduceOp op) override {
        return pick(data).allreduce_async(data, count, dtype, op);
    }
    void broadcast(void* data, std::size_t bytes, int root) override { pick(data).broadcast(data, bytes, root); }
    void allgather(const void* send, void* recv, std::size_t bytes) override {
        if (on_device(send) != on_device(recv))
            throw CommError("comm: allgather between host and device buffers; copy them to one side first");
        pick(send).allgather(send, recv, bytes);
    }
    void barrier() override { mpi_->barrier(); }

private:
    Communicator& pick(const void* data) { return on_device(data) ? *nccl_ : *mpi_; }
    std::unique_ptr<Communicator> mpi_;
    std::unique_ptr<Communicator> nccl_;
};

}  // namespace

namespace cuda {

std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap) {
    return std::make_unique<NcclCommunicator>(bootstrap);
}

std::unique_ptr<Communicator> make_dispatch_communicator(std::unique_ptr<Communicator> mpi,
                                                         std::unique_ptr<Communicator> nccl) {
    return std::make_unique<DispatchCommunicator>(std::move(mpi), std::move(nccl));
}

namespace {

NcclCommunicator& nccl_inside(Communicator& comm) {
    if (auto* nccl = dynamic_cast<NcclCommunicator*>(&comm)) return *nccl;
    if (auto* dispatch = dynamic_cast<DispatchCommunicator*>(&comm)) return nccl_inside(dispatch->nccl());
    throw CommError(fmt::format("comm: the {} communicator has no NCCL communicator and no CUDA stream "
                                "(scaling.use_gpu = false?)", comm.backend()));
}

}  // namespace

void* collective_stream(Communicator& comm) { return nccl_inside(comm).stream(); }

void enqueue_device_allreduce(Communicator& comm, void* device_data, std::size_t count, DType dtype,
                              ReduceOp op) {
    nccl_inside(comm).enqueue_allreduce(device_data, count, dtype, op);
}

void wait_collective_event(Communicator& comm, void* cuda_event, const char* what) {
    nccl_inside(comm).wait(static_cast<cudaEvent_t>(cuda_event), what);
}

}  // namespace cuda

}  // namespace trainrt::comm
