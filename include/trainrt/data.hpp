#pragma once
// A rank's part of one split of an HDF5 dataset (hdf5_schemas/dataset.md), and how a global batch
// splits over the ranks (batch_part).
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

// Any world size trains the same global batch. Global batch k of an epoch covers positions
// [k * batch, min((k + 1) * batch, real)) of the epoch's order (real = the split's samples,
// padding excluded); each rank trains the positions of that block its strided shard holds, so
// local batches differ by at most one sample. `mean_over` = the block's samples / ranks: a sum over
// the local samples divided by it, then averaged over the ranks, is the block's mean (a rank with
// more samples weighs more). With `ranks` dividing `batch` and `real`, count == mean_over ==
// batch / ranks for every full block: the even split.
struct BatchPart {
    std::size_t first = 0;  // index into this rank's shard
    std::size_t count = 0;  // samples; 0 when the block has fewer samples than there are ranks
    double mean_over = 0.0;
};

// Global batches per epoch: ceil(real / batch). DataError when `batch` is 0.
std::size_t global_batches(std::size_t real, std::size_t batch);

// Rank `rank`'s part of global batch `k` (k < global_batches(real, batch)); DataError otherwise.
BatchPart batch_part(std::size_t k, std::size_t real, std::size_t batch, int ranks, int rank);

}  // namespace trainrt
