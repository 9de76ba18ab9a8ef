#include "comm/mpi_communicator.hpp"

#include <limits>
#include <optional>

#include <fmt/format.h>

#include "comm/collective_watch.hpp"
#include "comm/mpi_check.hpp"
#include "comm/mpi_wait.hpp"
#include "trainrt/error.hpp"

namespace trainrt::comm {

MpiComm::MpiComm(MPI_Comm parent) {
    TRAINRT_MPI_CHECK(MPI_Comm_dup(parent, &comm_));
    TRAINRT_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
}

MpiComm::~MpiComm() { release(); }

MpiComm::MpiComm(MpiComm&& other) noexcept : comm_(other.comm_) { other.comm_ = MPI_COMM_NULL; }

MpiComm& MpiComm::operator=(MpiComm&& other) noexcept {
    if (this != &other) {
        release();
        comm_ = other.comm_;
        other.comm_ = MPI_COMM_NULL;
    }
    return *this;
}

void MpiComm::release() noexcept {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
    comm_ = MPI_COMM_NULL;
}

namespace {

MPI_Datatype mpi_type(DType dtype) {
    switch (dtype) {
        case DType::f32: return MPI_FLOAT;
        case DType::f64: return MPI_DOUBLE;
        case DType::i64: return MPI_INT64_T;
        case DType::i32: return MPI_INT32_T;
        case DType::u8: return MPI_UINT8_T;
    }
    throw CommError("comm: unknown dtype");
}

MPI_Op mpi_op(ReduceOp op) {
    switch (op) {
        case ReduceOp::sum:
        case ReduceOp::mean: return MPI_SUM;
        case ReduceOp::max: return MPI_MAX;
        case ReduceOp::min: return MPI_MIN;
    }
    throw CommError("comm: unknown reduce op");
}

void divide_in_place(void* data, std::size_t count, DType dtype, int divisor) {
    switch (dtype) {
        case DType::f32: {
            float* values = static_cast<float*>(data);
            const float scale = 1.0f / static_cast<float>(divisor);
            for (std::size_t i = 0; i < count; ++i) values[i] *= scale;
            return;
        }
        case DType::f64: {
            double* values = static_cast<double*>(data);
            for (std::size_t i = 0; i < count; ++i) values[i] /= divisor;
            return;
        }
        case DType::i64: {
            std::int64_t* values = static_cast<std::int64_t*>(data);
            for (std::size_t i = 0; i < count; ++i) values[i] /= divisor;
            return;
        }
        case DType::i32: {
            std::int32_t* values = static_cast<std::int32_t*>(data);
            for (std::size_t i = 0; i < count; ++i) values[i] /= divisor;
            return;
        }
        case DType::u8: {
            std::uint8_t* values = static_cast<std::uint8_t*>(data);
            for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<std::uint8_t>(values[i] / divisor);
            return;
        }
    }
}

// A nonblocking allreduce; `mean` is finished (divided) when the request completes.
class MpiWork final : public Work {
public:
    MpiWork(void* data, std::size_t count, DType dtype, ReduceOp op, int size)
        : data_(data), count_(count), dtype_(dtype), op_(op), size_(size) {}
    MPI_Request* request() { return &request_; }

    void wait() override {
        CollectiveScope watched("allreduce (async, e.g. a gradient bucket)");
        if (done_) return;
        wait_politely(request_);
        complete();
    }
    bool test() override {
        if (done_) return true;
        int flag = 0;
        TRAINRT_MPI_CHECK(MPI_Test(&request_, &flag, MPI_STATUS_IGNORE));
        if (flag) complete();
        return done_;
    }

private:
    void complete() {
        if (op_ == ReduceOp::mean && size_ > 1) divide_in_place(data_, count_, dtype_, size_);
        done_ = true;
    }
    MPI_Request request_ = MPI_REQUEST_NULL;
    void* data_;
    std::size_t count_;
    DType dtype_;
    ReduceOp op_;
    int size_;
    bool done_ = false;
};

// A CollectiveScope, or nothing for a helper thread's communicator.
class MaybeWatched {
public:
    MaybeWatched(bool watched, const char* name) {
        if (watched) scope_.emplace(name);
    }

private:
    std::optional<CollectiveScope> scope_;
};

class MpiCommunicator final : public Communicator {
public:
    MpiCommunicator(MPI_Comm parent, bool watched) : comm_(parent), watched_(watched) {
        TRAINRT_MPI_CHECK(MPI_Comm_rank(comm_.get(), &rank_));
        TRAINRT_MPI_CHECK(MPI_Comm_size(comm_.get(), &size_));
    }
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::string backend() const override { return "mpi"; }

    using Communicator::allreduce;
    // The blocking collectives start their nonblocking twin and wait politely (comm/mpi_wait.hpp).
    void allreduce(void* data, std::size_t count, DType dtype, ReduceOp op) override {
        MaybeWatched scope(watched_, "allreduce");
        MPI_Request request = MPI_REQUEST_NULL;
        TRAINRT_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, data, checked_count(count), mpi_type(dtype),
                                         mpi_op(op), comm_.get(), &request));
        wait_politely(request);
        if (op == ReduceOp::mean && size_ > 1) divide_in_place(data, count, dtype, size_);
    }
    std::unique_ptr<Work> allreduce_async(void* data, std::size_t count, DType dtype,
                                          ReduceOp op) override {
        auto work = std::make_unique<MpiWork>(data, count, dtype, op, size_);
        TRAINRT_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, data, checked_count(count), mpi_type(dtype),
                                         mpi_op(op), comm_.get(), work->request()));
        return work;
    }
    void broadcast(void* data, std::size_t bytes, int root) override {
        MaybeWatched scope(watched_, "broadcast");
        MPI_Request request = MPI_REQUEST_NULL;
        TRAINRT_MPI_CHECK(MPI_Ibcast(data, checked_count(bytes), MPI_BYTE, root, comm_.get(), &request));
        wait_politely(request);
    }
    void allgather(const void* send, void* recv, std::size_t bytes_per_rank) override {
        int count = checked_count(bytes_per_rank);
        MaybeWatched scope(watched_, "allgather");
        MPI_Request request = MPI_REQUEST_NULL;
        TRAINRT_MPI_CHECK(MPI_Iallgather(send, count, MPI_BYTE, recv, count, MPI_BYTE, comm_.get(), &request));
        wait_politely(request);
    }
    void barrier() override {
        MaybeWatched scope(watched_, "barrier");
        MPI_Request request = MPI_REQUEST_NULL;
        TRAINRT_MPI_CHECK(MPI_Ibarrier(comm_.get(), &request));
        wait_politely(request);
    }

private:
    static int checked_count(std::size_t count) {
        if (count > static_cast<std::size_t>(std::numeric_limits<int>::max()))
            throw CommError(fmt::format("comm: {} elements exceed MPI's int count", count));
        return static_cast<int>(count);
    }
    MpiComm comm_;
    bool watched_;
    int rank_ = 0;
    int size_ = 1;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(MPI_Comm parent) {
    return std::make_unique<MpiCommunicator>(parent, true);
}

std::unique_ptr<Communicator> make_world_communicator() { return make_mpi_communicator(MPI_COMM_WORLD); }

std::unique_ptr<Communicator> make_helper_communicator() {
    return std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, false);
}

}  // namespace trainrt::comm
