#pragma once
// session.dataset(split): the split as one rank streams it (trainrt/data.hpp's Dataset).
#include <cstdint>
#include <string>

#include "trainrt/data.hpp"

namespace trainrt::data {

// Reads the file's layout now (DataError when it is unusable or has no such split); batches are
// read later, by each BatchIterator's own reader.
Dataset open_dataset(const std::string& path, const std::string& split, int rank, int ranks, std::uint64_t seed);

// The one rule for resuming a stream position: it was saved in the order (Dataset::order_key) it
// is read in now; else CheckpointError (exit 8) naming `position` and both orders.
void check_same_order(const std::string& position, const std::string& saved, const std::string& wanted);

}  // namespace trainrt::data
