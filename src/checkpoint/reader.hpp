#pragma once
// Opening a committed checkpoint for restore: the manifest, then block reads on demand.
#include <string>

#include "checkpoint/manifest.hpp"
#include "trainrt/checkpoint.hpp"

namespace trainrt {

struct Checkpoint::Impl {
    std::string path;
    checkpoint::Manifest manifest;
};

namespace checkpoint {

// Reads the manifest of `dir` (no data verification: see catalog.hpp for that).
Checkpoint open_checkpoint(const std::string& dir);

}  // namespace checkpoint
}  // namespace trainrt
