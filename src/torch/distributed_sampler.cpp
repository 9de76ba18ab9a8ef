// trainrt::torch::DistributedSampler (torch.hpp): LibTorch's sampler interface over the split
// contract that session.dataset_shard follows (data/shard.hpp computes both).
#include <torch/serialize/archive.h>

#include <fmt/format.h>

#include "config/settings.hpp"
#include "data/shard.hpp"
#include "trainrt/error.hpp"
#include "trainrt/torch.hpp"

namespace trainrt::torch {

DistributedSampler::DistributedSampler(const Session& session, std::size_t dataset_size, bool shuffle)
    : DistributedSampler(dataset_size, session.context().world_rank, session.context().world_size, shuffle,
                         static_cast<std::uint64_t>(RunSettings::read(session.config()).seed.value)) {}

DistributedSampler::DistributedSampler(std::size_t dataset_size, int rank, int ranks, bool shuffle,
                                       std::uint64_t seed)
    : rank_(rank), ranks_(ranks), seed_(seed), dataset_size_(dataset_size), shuffle_(shuffle) {
    if (dataset_size == 0) throw DataError("DistributedSampler: the dataset is empty; give it at least one sample");
    if (ranks <= 0 || rank < 0 || rank >= ranks)
        throw DataError(fmt::format("DistributedSampler: rank {} of {} does not exist", rank, ranks));
    reset();
}

void DistributedSampler::set_epoch(std::uint64_t epoch) {
    epoch_ = epoch;
    reset();
}

void DistributedSampler::start_at(std::size_t samples) {
    if (samples > size())
        throw DataError(fmt::format("DistributedSampler: resume position {} is past this rank's {} samples; "
                                    "the checkpoint belongs to another dataset or world size",
                                    samples, size()));
    start_ = samples;
    next_ = samples;
}

std::size_t DistributedSampler::size() const { return (dataset_size_ + ranks_ - 1) / ranks_; }

void DistributedSampler::reset(c10::optional<std::size_t> new_size) {
    if (new_size) dataset_size_ = *new_size;
    std::size_t padded = 0;
    const auto order = data::epoch_order(dataset_size_, shuffle_, seed_, epoch_);
    const auto mine = data::rank_indices(order, rank_, ranks_, padded);
    indices_.assign(mine.begin(), mine.end());
    next_ = start_;
    start_ = 0;  // a resume position serves one epoch
}

c10::optional<std::vector<std::size_t>> DistributedSampler::next(std::size_t batch_size) {
    if (next_ >= indices_.size()) return c10::nullopt;
    const std::size_t end = std::min(indices_.size(), next_ + batch_size);
    std::vector<std::size_t> batch(indices_.begin() + static_cast<std::ptrdiff_t>(next_),
                                   indices_.begin() + static_cast<std::ptrdiff_t>(end));
    next_ = end;
    return batch;
}

void DistributedSampler::save(::torch::serialize::OutputArchive& archive) const {
    archive.write("epoch", at::tensor(static_cast<std::int64_t>(epoch_)), /*is_buffer=*/true);
    archive.write("next", at::tensor(static_cast<std::int64_t>(next_)), /*is_buffer=*/true);
}

void DistributedSampler::load(::torch::serialize::InputArchive& archive) {
    at::Tensor epoch = at::empty({}, at::kLong), next = at::empty({}, at::kLong);
    archive.read("epoch", epoch, /*is_buffer=*/true);
    archive.read("next", next, /*is_buffer=*/true);
    set_epoch(static_cast<std::uint64_t>(epoch.item<std::int64_t>()));
    start_at(static_cast<std::size_t>(next.item<std::int64_t>()));
}

}  // namespace trainrt::torch
