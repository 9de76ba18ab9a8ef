#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "trainrt/comm.hpp"
#include "trainrt/error.hpp"

namespace trainrt {

std::size_t dtype_size(DType dtype) {
    switch (dtype) {
        case DType::f32: return 4;
        case DType::f64: return 8;
        case DType::i64: return 8;
        case DType::i32: return 4;
        case DType::u8: return 1;
    }
    return 0;
}

struct GradientReducer::Impl {
    struct Slot {
        std::size_t bucket;
        std::size_t offset;  // in floats, inside the bucket
        std::size_t size;
    };
    struct Bucket {
        std::vector<float> data;
        std::size_t pending = 0;  // gradients not yet marked ready this step
        std::size_t members = 0;
        std::unique_ptr<Work> work;
    };

    Communicator& comm;
    std::vector<Slot> slots;
    std::vector<Bucket> buckets;
    std::vector<bool> ready;

    Impl(Communicator& c, std::span<const std::size_t> sizes, std::size_t bucket_bytes)
        : comm(c), ready(sizes.size(), false) {
        const std::size_t bucket_floats = std::max<std::size_t>(1, bucket_bytes / sizeof(float));
        std::size_t filled = bucket_floats;  // forces a first bucket
        for (std::size_t size : sizes) {
            if (filled + size > bucket_floats && filled > 0) {
                buckets.emplace_back();
                filled = 0;
            }
            slots.push_back({buckets.size() - 1, filled, size});
            filled += size;
            buckets.back().members += 1;
        }
        for (std::size_t i = 0; i < buckets.size(); ++i) {
            std::size_t floats = 0;
            for (const Slot& slot : slots)
                if (slot.bucket == i) floats = slot.offset + slot.size;
            buckets[i].data.assign(floats, 0.0f);
            buckets[i].pending = buckets[i].members;
        }
    }

    // Lets earlier buckets' nonblocking collectives progress while backward computes.
    void poke() {
        for (Bucket& bucket : buckets)
            if (bucket.work) bucket.work->test();
    }
};

GradientReducer::GradientReducer(Communicator& comm, std::span<const std::size_t> sizes,
                                 std::size_t bucket_bytes)
    : impl_(std::make_unique<Impl>(comm, sizes, bucket_bytes)) {}

GradientReducer::~GradientReducer() = default;

std::span<float> GradientReducer::gradient(std::size_t index) {
    const Impl::Slot& slot = impl_->slots.at(index);
    return {impl_->buckets[slot.bucket].data.data() + slot.offset, slot.size};
}

void GradientReducer::mark_ready(std::size_t index) {
    if (impl_->ready.at(index))
        throw CommError(fmt::format("GradientReducer: gradient {} marked ready twice in one step",
                                    index));
    impl_->ready[index] = true;
    Impl::Bucket& bucket = impl_->buckets[impl_->slots[index].bucket];
    impl_->poke();
    if (--bucket.pending == 0)
        bucket.work = impl_->comm.allreduce_async(bucket.data.data(), bucket.data.size(),
                                                  DType::f32, ReduceOp::mean);
}

void GradientReducer::finish() {
    for (std::size_t i = 0; i < impl_->ready.size(); ++i)
        if (!impl_->ready[i])
            throw CommError(fmt::format("GradientReducer: gradient {} never marked ready", i));
    for (Impl::Bucket& bucket : impl_->buckets) {
        bucket.work->wait();
        bucket.work.reset();
        bucket.pending = bucket.members;
    }
    std::fill(impl_->ready.begin(), impl_->ready.end(), false);
}

std::size_t GradientReducer::bucket_count() const { return impl_->buckets.size(); }

}  // namespace trainrt
