#pragma once
// The runtime's view into a CheckpointState (friend of it): async saves copy the tensor data to
// host memory and repoint the parts at the copies.
#include <cstddef>
#include <memory>
#include <vector>

#include "trainrt/checkpoint.hpp"

namespace trainrt::checkpoint {

// Host memory for async copies, kept between saves: after the first save the copy touches no
// new pages (page faults on a fresh 1 GiB buffer cost as much as the copy itself).
// Grows, never shrinks: a tensor that grows a little at every save (an XGBoost model, a round
// more each time) reuses its pages instead of faulting in a new allocation per save.
struct HostBuffer {
    std::unique_ptr<std::byte[]> data;
    std::size_t capacity = 0;
};

struct StateAccess {
    // A copy of `state` whose tensor data lives in `buffers` (resized and reused as needed).
    static CheckpointState deep_copy(const CheckpointState& state, std::vector<HostBuffer>& buffers);
};

}  // namespace trainrt::checkpoint
