#pragma once
// What the [data] settings and a workload's batch size mean for the data layer: the dataset
// file, a split's stream options, the global batch. Errors name the key and where it was set.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/settings.hpp"
#include "trainrt/data.hpp"

namespace trainrt::data {

// data.path; ConfigError (one line) when it is not set.
std::string configured_path(const DataSettings& settings);

// The stream options of `split` for a global batch of `batch_size`: data.prefetch_batches, and
// data.shuffle for the train split (every other split is read in file order).
BatchOptions batch_options(const DataSettings& settings, const std::string& split, std::size_t batch_size);

// A workload's global batch setting; ConfigError when it is smaller than the world (every rank
// needs at least one sample per step).
std::size_t global_batch(const Setting<std::int64_t>& batch, int ranks);

// "global" / "true" / ... -> Shuffle: the rule of data.shuffle's words for callers that are
// given one (a Python iter_batches call); ConfigError naming `where` for anything else.
Shuffle shuffle_from(const std::string& word, const std::string& where);

}  // namespace trainrt::data
