#pragma once
// A rank's whole part of a split at once (DatasetShard, contract in trainrt/data.hpp): the
// FashionMNIST-shaped `images` and `labels` uint8 columns, read with the same RowReader and epoch
// order as the streams. For data kept resident (the GPU engine, the LibTorch ShardLoader).
#include <cstdint>
#include <string>
#include <vector>

#include "data/epoch_order.hpp"
#include "trainrt/data.hpp"

namespace trainrt::data {

struct ShardRequest {
    std::string path;
    std::string split;
    int rank = 0;
    int ranks = 1;
    bool shuffle = false;
    std::uint64_t seed = 0;
    std::uint64_t epoch = 0;
};

DatasetShard read_shard(const ShardRequest& request);

// Checks that `split` of the dataset at `path` has uint8 `images` and `labels` columns; a
// DataError naming the file otherwise.
void check_split(const std::string& path, const std::string& split);

}  // namespace trainrt::data
