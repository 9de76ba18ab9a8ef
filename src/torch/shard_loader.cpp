// trainrt::torch::ShardLoader (torch.hpp): a rank's shard as batches of tensors.
#include <ATen/ATen.h>

#include <fmt/format.h>

#include "trainrt/error.hpp"
#include "trainrt/torch.hpp"

namespace trainrt::torch {
namespace {

// Samples [first, first + count) of the shard as tensors (copies: the shard stays untouched).
Batch shard_batch(const DatasetShard& shard, std::size_t first, std::int64_t count) {
    std::vector<std::int64_t> sizes{count, 1};
    for (std::size_t extent : shard.sample_shape) sizes.push_back(static_cast<std::int64_t>(extent));
    auto* pixels = const_cast<std::uint8_t*>(shard.features.data() + first * shard.sample_size());
    auto* labels = const_cast<std::uint8_t*>(shard.labels.data() + first);
    return {at::from_blob(pixels, sizes, at::kByte).to(at::kFloat).div_(255.0f),
            at::from_blob(labels, {count}, at::kByte).to(at::kLong)};
}

}  // namespace

ShardLoader::ShardLoader(const DatasetShard& shard, std::int64_t batch_size, bool drop_last)
    : shard_(shard), batch_size_(batch_size), drop_last_(drop_last) {
    if (batch_size <= 0) throw WorkloadError(fmt::format("ShardLoader: batch size {} must be positive", batch_size));
}

std::int64_t ShardLoader::size() const {
    const auto count = static_cast<std::int64_t>(shard_.count);
    return drop_last_ ? count / batch_size_ : (count + batch_size_ - 1) / batch_size_;
}

Batch ShardLoader::slice(std::size_t first, std::int64_t count) const { return shard_batch(shard_, first, count); }

Batch ShardLoader::batch(std::int64_t index) const {
    if (index < 0 || index >= size())
        throw WorkloadError(fmt::format("ShardLoader: batch {} of {} does not exist", index, size()));
    const std::size_t first = static_cast<std::size_t>(index * batch_size_);
    return slice(first, std::min<std::int64_t>(batch_size_, static_cast<std::int64_t>(shard_.count - first)));
}

GlobalBatchLoader::GlobalBatchLoader(const DatasetShard& shard, std::int64_t global_batch, int rank, int ranks)
    : shard_(shard), global_batch_(static_cast<std::size_t>(global_batch)), rank_(rank), ranks_(ranks) {
    if (global_batch < ranks)
        throw WorkloadError(fmt::format("GlobalBatchLoader: a global batch of {} cannot give each of {} ranks a sample",
                                        global_batch, ranks));
}

std::int64_t GlobalBatchLoader::size() const {
    return static_cast<std::int64_t>(global_batches(shard_.global_count, global_batch_));
}

BatchPartTensors GlobalBatchLoader::part(std::int64_t k) const {
    if (k < 0 || k >= size())
        throw WorkloadError(fmt::format("GlobalBatchLoader: global batch {} of {} does not exist", k, size()));
    const BatchPart part = batch_part(static_cast<std::size_t>(k), shard_.global_count, global_batch_, ranks_, rank_);
    return {shard_batch(shard_, part.first, static_cast<std::int64_t>(part.count)), part.mean_over};
}

}  // namespace trainrt::torch
