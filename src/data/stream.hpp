#pragma once
// session.dataset(split): the split as one rank streams it (trainrt/data.hpp's Dataset), and
// the [data] keys that set a built-in workload's BatchOptions.
#include <cstdint>
#include <string>

#include "trainrt/config.hpp"
#include "trainrt/data.hpp"

namespace trainrt::data {

// Reads the file's layout now (DataError when it is unusable or has no such split); batches are
// read later, by each BatchIterator's own reader.
Dataset open_dataset(const std::string& path, const std::string& split, int rank, int ranks, std::uint64_t seed);

// [data] prefetch_batches, shuffle (for the "train" split only) and shuffle_buffer, with the
// given global batch.
BatchOptions configured_batch_options(const JobConfig& config, const std::string& split, std::size_t batch_size);

// data.shuffle's value: none | global | blocks (true = global, false = none, for old configs).
Shuffle parse_shuffle(const std::string& value);

}  // namespace trainrt::data
