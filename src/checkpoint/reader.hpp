#pragma once
// Opening a committed checkpoint for restore: the manifest, then block reads on demand.
#include <atomic>
#include <mutex>
#include <string>

#include "checkpoint/catalog.hpp"
#include "checkpoint/manifest.hpp"
#include "trainrt/checkpoint.hpp"

namespace trainrt {

struct Checkpoint::Impl {
    std::string path;
    checkpoint::Manifest manifest;
    mutable std::atomic<double> read_seconds{0.0};  // time spent in Checkpoint::read
    // The restoring rank's own file, kept from its verification: blocks stored in it are copied
    // from memory until each of its parts' bytes was read once, then it is freed.
    mutable std::mutex image_mutex;
    mutable checkpoint::KeptImage kept;
    mutable std::uint64_t kept_unread = 0;  // bytes of its parts not yet read
};

namespace checkpoint {

// Reads the manifest of `dir` (no data verification: see catalog.hpp for that). `kept`: a file of
// it already verified and in memory, read from there.
Checkpoint open_checkpoint(const std::string& dir, KeptImage kept = {});

}  // namespace checkpoint
}  // namespace trainrt
