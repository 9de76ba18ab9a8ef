#include "data/epoch_order.hpp"

#include <algorithm>
#include <random>

namespace trainrt::data {
namespace {

// SplitMix64's finaliser: a fixed, well-mixed 64-bit bijection (same on every build).
std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t epoch, std::uint64_t salt) {
    return mix(mix(seed * 0x9E3779B97F4A7C15ull + salt) ^ (epoch + 1));
}

// Fisher-Yates with mt19937_64 and no implementation-defined distribution: every build agrees.
template <class T> void shuffle_in_place(std::vector<T>& values, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    for (std::size_t i = values.size(); i > 1; --i) std::swap(values[i - 1], values[engine() % i]);
}

}  // namespace

EpochOrder::EpochOrder(std::uint64_t rows, Shuffle shuffle, std::uint64_t seed, std::uint64_t epoch,
                       std::uint64_t block_rows, std::uint64_t window)
    : rows_(rows), shuffle_(rows > 1 ? shuffle : Shuffle::none), seed_(seed), epoch_(epoch) {
    if (shuffle_ == Shuffle::global) {
        while ((1ull << (2 * half_bits_)) < rows_) ++half_bits_;
        for (std::uint64_t k = 0; k < 6; ++k) keys_[k] = stream_seed(seed, epoch, 0x6C6F62616CULL + k);
    } else if (shuffle_ == Shuffle::blocks) {
        block_rows_ = std::max<std::uint64_t>(1, std::min(block_rows, rows_));
        window_ = std::max<std::uint64_t>(1, std::min(window, rows_));
        const std::uint64_t count = (rows_ + block_rows_ - 1) / block_rows_;
        blocks_.resize(count);
        for (std::uint64_t b = 0; b < count; ++b) blocks_[b] = b;
        shuffle_in_place(blocks_, stream_seed(seed, epoch, 0x626C6F636BULL));
        last_block_ = count - 1;
        last_block_rows_ = rows_ - last_block_ * block_rows_;
        last_slot_ = static_cast<std::uint64_t>(std::find(blocks_.begin(), blocks_.end(), last_block_) - blocks_.begin());
    }
}

std::uint64_t EpochOrder::feistel(std::uint64_t x) const {
    const std::uint64_t mask = (1ull << half_bits_) - 1;
    std::uint64_t left = x >> half_bits_, right = x & mask;
    for (std::uint64_t key : keys_) {
        const std::uint64_t next = left ^ (mix(right ^ key) & mask);
        left = right;
        right = next;
    }
    return (left << half_bits_) | right;
}

std::uint64_t EpochOrder::permuted(std::uint64_t position) const {
    std::uint64_t x = feistel(position);
    while (x >= rows_) x = feistel(x);  // cycle-walking: a bijection of [0, rows)
    return x;
}

// Position q of the block-permuted sequence -> row. Every block has block_rows_ rows but the
// split's last one, which sits at slot last_slot_.
std::uint64_t EpochOrder::block_row(std::uint64_t q) const {
    const std::uint64_t before = last_slot_ * block_rows_;
    std::uint64_t slot, offset;
    if (q < before) {
        slot = q / block_rows_, offset = q % block_rows_;
    } else if (q < before + last_block_rows_) {
        slot = last_slot_, offset = q - before;
    } else {
        const std::uint64_t after = q - before - last_block_rows_;
        slot = last_slot_ + 1 + after / block_rows_, offset = after % block_rows_;
    }
    return blocks_[slot] * block_rows_ + offset;
}

void EpochOrder::load_window(std::uint64_t window) const {
    const std::uint64_t begin = window * window_;
    const std::uint64_t length = std::min(window_, rows_ - begin);
    window_order_.resize(length);
    for (std::uint32_t i = 0; i < length; ++i) window_order_[i] = i;
    shuffle_in_place(window_order_, stream_seed(seed_, epoch_, 0x77696E646FULL + window));
    loaded_window_ = window;
}

std::uint64_t EpochOrder::row(std::uint64_t position) const {
    switch (shuffle_) {
        case Shuffle::none: return position;
        case Shuffle::global: return permuted(position);
        case Shuffle::blocks: {
            const std::uint64_t window = position / window_;
            if (window != loaded_window_) load_window(window);
            return block_row(window * window_ + window_order_[position - window * window_]);
        }
    }
    return position;
}

std::vector<std::uint64_t> epoch_order(std::uint64_t count, bool shuffle, std::uint64_t seed,
                                       std::uint64_t epoch) {
    const EpochOrder order(count, shuffle ? Shuffle::global : Shuffle::none, seed, epoch);
    std::vector<std::uint64_t> rows(count);
    for (std::uint64_t p = 0; p < count; ++p) rows[p] = order.row(p);
    return rows;
}

std::vector<std::uint64_t> rank_indices(const std::vector<std::uint64_t>& order, int rank,
                                        int ranks, std::size_t& padded) {
    const std::size_t per_rank = (order.size() + ranks - 1) / ranks;
    std::vector<std::uint64_t> mine;
    mine.reserve(per_rank);
    padded = 0;
    for (std::size_t k = 0; k < per_rank; ++k) {
        std::size_t position = k * ranks + rank;
        if (position >= order.size()) ++padded;
        mine.push_back(order[position % order.size()]);
    }
    return mine;
}

}  // namespace trainrt::data
