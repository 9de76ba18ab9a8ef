#include <algorithm>

#include <fmt/format.h>

#include "trainrt/data.hpp"
#include "trainrt/error.hpp"

namespace trainrt {
namespace {

// Positions p' < p with p' % ranks == rank: where position p falls in that rank's strided shard.
std::size_t shard_index(std::size_t position, std::size_t ranks, std::size_t rank) {
    return (position + ranks - 1 - rank) / ranks;
}

}  // namespace

std::size_t global_batches(std::size_t real, std::size_t batch) {
    if (batch == 0) throw DataError("data: a global batch of 0 samples");
    return (real + batch - 1) / batch;
}

BatchPart batch_part(std::size_t k, std::size_t real, std::size_t batch, int ranks, int rank) {
    if (ranks <= 0 || rank < 0 || rank >= ranks || k >= global_batches(real, batch))
        throw DataError(fmt::format("data: no part {} of global batch {} of {} ({} samples, batch {})",
                                    rank, k, global_batches(real, batch), real, batch));
    const auto n = static_cast<std::size_t>(ranks), r = static_cast<std::size_t>(rank);
    const std::size_t begin = k * batch, end = std::min(begin + batch, real);
    BatchPart part;
    part.first = shard_index(begin, n, r);
    part.count = shard_index(end, n, r) - part.first;
    part.mean_over = static_cast<double>(end - begin) / static_cast<double>(ranks);
    return part;
}

}  // namespace trainrt
