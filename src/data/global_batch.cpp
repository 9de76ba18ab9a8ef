#include "data/global_batch.hpp"

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::data {

std::size_t configured_global_batch(const JobConfig& config, int ranks) {
    const std::int64_t batch = config.get_int("train.batch_size");
    if (batch < ranks)
        throw ConfigError(fmt::format(
            "config: train.batch_size={} ({}) is smaller than the {} ranks; give every rank at least "
            "one sample per step: a batch of {} or more, or fewer ranks", batch, config.source("train.batch_size"),
            ranks, ranks));
    return static_cast<std::size_t>(batch);
}

}  // namespace trainrt::data
