#pragma once
// A rank's part of one split of an HDF5 dataset (hdf5_schemas/dataset.md).
//
// Contract: with n ranks and N samples, each rank gets ceil(N / n) samples; rank r takes the
// samples at positions r, r + n, r + 2n, ... of the epoch's order (PyTorch's DistributedSampler).
// When n does not divide N the order is padded by repeating its first samples, so every rank has
// the same count (padded samples are marked in `padded`). The epoch's order is 0..N-1, or with
// shuffling a permutation drawn from (seed, epoch) that every rank computes identically.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trainrt {

struct DatasetShard {
    std::string split;                      // "train", "test"
    std::size_t global_count = 0;           // samples in the split
    std::size_t count = 0;                  // samples in this rank's part
    std::vector<std::size_t> sample_shape;  // e.g. {28, 28}
    std::vector<std::uint8_t> features;     // count * product(sample_shape), row-major
    std::vector<std::uint8_t> labels;       // count
    std::vector<std::uint64_t> indices;     // global index of each sample
    std::size_t padded = 0;                 // trailing samples that repeat earlier ones

    std::size_t sample_size() const;
};

}  // namespace trainrt
