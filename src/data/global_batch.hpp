#pragma once
// train.batch_size as a global batch (split over the ranks by trainrt::batch_part): the one check
// every built-in workload makes of it.
#include <cstddef>

#include "trainrt/config.hpp"

namespace trainrt::data {

// train.batch_size; ConfigError (one line naming its source) when it is smaller than `ranks`,
// since every rank needs at least one sample per step.
std::size_t configured_global_batch(const JobConfig& config, int ranks);

}  // namespace trainrt::data
