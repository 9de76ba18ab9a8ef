#pragma once
#include <atomic>
// Opening a committed checkpoint for restore: the manifest, then block reads on demand.
#include <string>

#include "checkpoint/manifest.hpp"
#include "trainrt/checkpoint.hpp"

namespace trainrt {

struct Checkpoint::Impl {
    std::string path;
    checkpoint::Manifest manifest;
    mutable std::atomic<double> read_seconds{0.0};  // time spent in Checkpoint::read
};

namespace checkpoint {

// Reads the manifest of `dir` (no data verification: see catalog.hpp for that).
Checkpoint open_checkpoint(const std::string& dir);

}  // namespace checkpoint
}  // namespace trainrt
