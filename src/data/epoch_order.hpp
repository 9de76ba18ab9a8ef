#pragma once
// The order in which an epoch visits a split's rows (the split contract in trainrt/data.hpp):
// position p of the epoch -> row. The same for every rank and every world size, drawn from
// (seed, epoch) only, and computed per position, so a stream can start at any batch (resume)
// and no rank holds a permutation of the whole split in memory.
//  - none:   row = position.
//  - global: a pseudo-random permutation of [0, N): a balanced Feistel network over the next
//            power of 4 with keys from (seed, epoch), cycle-walking into [0, N).
//  - blocks: the split cut into blocks of `block_rows` consecutive rows (an HDF5 chunk), the
//            blocks permuted, then positions shuffled inside windows of `window` positions
//            (Fisher-Yates per window): a reader sees whole blocks, at the cost of less mixing.
#include <cstdint>
#include <vector>

#include "trainrt/data.hpp"

namespace trainrt::data {

class EpochOrder {
public:
    EpochOrder(std::uint64_t rows, Shuffle shuffle, std::uint64_t seed, std::uint64_t epoch,
               std::uint64_t block_rows = 1, std::uint64_t window = 1);
    std::uint64_t size() const { return rows_; }
    Shuffle shuffle() const { return shuffle_; }
    // The row at `position` (< size()). Not thread-safe (blocks memoises its current window).
    std::uint64_t row(std::uint64_t position) const;

private:
    std::uint64_t feistel(std::uint64_t x) const;
    std::uint64_t permuted(std::uint64_t position) const;  // global
    std::uint64_t block_row(std::uint64_t q) const;        // blocks, before the window shuffle
    void load_window(std::uint64_t window) const;

    std::uint64_t rows_;
    Shuffle shuffle_;
    std::uint64_t seed_, epoch_;
    unsigned half_bits_ = 0;
    std::uint64_t keys_[6] = {};
    std::uint64_t block_rows_ = 1, window_ = 1, last_block_ = 0, last_block_rows_ = 0, last_slot_ = 0;
    std::vector<std::uint64_t> blocks_;  // slot -> block
    mutable std::uint64_t loaded_window_ = ~0ull;
    mutable std::vector<std::uint32_t> window_order_;
};

// The whole order as a vector (a rank's whole part at once: dataset_shard, DistributedSampler).
std::vector<std::uint64_t> epoch_order(std::uint64_t count, bool shuffle, std::uint64_t seed,
                                       std::uint64_t epoch);

// The positions rank `rank` of `ranks` takes from `order`, padded to equal counts.
std::vector<std::uint64_t> rank_indices(const std::vector<std::uint64_t>& order, int rank,
                                        int ranks, std::size_t& padded);

}  // namespace trainrt::data
