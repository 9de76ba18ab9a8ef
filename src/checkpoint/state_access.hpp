#pragma once
// The runtime's view into a CheckpointState (friend of it): async saves copy the tensor data to
// host memory and repoint the parts at the copies.
#include <cstddef>
#include <memory>
#include <vector>

#include "trainrt/checkpoint.hpp"

namespace trainrt::checkpoint {

struct StateAccess {
    // A copy of `state` whose tensor data lives in `storage` (owned by the caller).
    static CheckpointState deep_copy(const CheckpointState& state,
                                     std::vector<std::unique_ptr<std::byte[]>>& storage);
};

}  // namespace trainrt::checkpoint
