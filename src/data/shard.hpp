#pragma once
// Reads one rank's part of a split (contract in include/trainrt/data.hpp) with HDF5 hyperslabs:
// a rank reads only its own rows, never the whole file.
#include <cstdint>
#include <string>
#include <vector>

#include "trainrt/data.hpp"

namespace trainrt::data {

// The epoch's sample order: 0..count-1, or a permutation from (seed, epoch) when shuffling.
std::vector<std::uint64_t> epoch_order(std::uint64_t count, bool shuffle, std::uint64_t seed,
                                       std::uint64_t epoch);

// The positions rank `rank` of `ranks` takes from `order`, padded to equal counts.
std::vector<std::uint64_t> rank_indices(const std::vector<std::uint64_t>& order, int rank,
                                        int ranks, std::size_t& padded);

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

// Opens `split` of the dataset at `path` and checks its layout; DataError when it is unusable.
void check_split(const std::string& path, const std::string& split);

}  // namespace trainrt::data
