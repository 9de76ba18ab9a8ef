#pragma once
// The collective interface every backend (MPI for host memory, NCCL for GPU memory) implements. Collectives are
// called by all ranks in the same order. A failure raises trainrt::CommError with the library's
// own error text.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace trainrt {

enum class DType { f32, f64, i64, i32, u8 };
enum class ReduceOp { sum, mean, max, min };

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::i64; }
template <> constexpr DType dtype_of<std::int32_t>() { return DType::i32; }
template <> constexpr DType dtype_of<std::uint8_t>() { return DType::u8; }

std::size_t dtype_size(DType dtype);

// A collective in flight. wait() blocks until it is complete and rethrows its failure.
class Work {
public:
    virtual ~Work() = default;
    virtual void wait() = 0;
    virtual bool test() = 0;  // true once complete; never blocks
};

class Communicator {
public:
    virtual ~Communicator() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual std::string backend() const = 0;

    // In place. `mean` divides the sum by size(); for i64 and i32 it is an integer division.
    virtual std::unique_ptr<Work> allreduce_async(void* data, std::size_t count, DType dtype,
                                                  ReduceOp op) = 0;
    virtual void broadcast(void* data, std::size_t bytes, int root) = 0;
    // recv holds size() * bytes_per_rank bytes, rank i's part at i * bytes_per_rank.
    virtual void allgather(const void* send, void* recv, std::size_t bytes_per_rank) = 0;
    virtual void barrier() = 0;

    // Blocking; a backend may override it with a faster blocking collective.
    virtual void allreduce(void* data, std::size_t count, DType dtype, ReduceOp op) {
        allreduce_async(data, count, dtype, op)->wait();
    }
    template <class T> void allreduce(std::span<T> data, ReduceOp op) {
        allreduce(data.data(), data.size(), dtype_of<T>(), op);
    }
    template <class T> T allreduce_value(T value, ReduceOp op) {
        allreduce(&value, 1, dtype_of<T>(), op);
        return value;
    }
};

// Averages gradients across ranks in fused buckets. Parameters are registered in the order
// backward produces their gradients; gradient storage lives inside the reducer's buckets, so the
// model writes gradients straight into `gradient(i)` and nothing is copied. When every gradient
// of a bucket is marked ready its allreduce starts at once, overlapping the rest of backward.
class GradientReducer {
public:
    GradientReducer(Communicator& comm, std::span<const std::size_t> sizes_in_ready_order,
                    std::size_t bucket_bytes);
    ~GradientReducer();
    GradientReducer(const GradientReducer&) = delete;
    GradientReducer& operator=(const GradientReducer&) = delete;

    std::span<float> gradient(std::size_t index);
    void mark_ready(std::size_t index);   // gradient `index` is final for this step
    void finish();                        // waits for every bucket; gradients are then averaged
    std::size_t bucket_count() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace trainrt
