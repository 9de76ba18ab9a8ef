#pragma once
// Holds a committed checkpoint's files against hdf5_schemas/checkpoint.md: root attributes of
// every data file, one dataset per stored part with the part's shape and the manifest's type,
// and global_shape / replicated attributes that agree with the manifest.
#include <string>
#include <vector>

#include "checkpoint/manifest.hpp"

namespace trainrt::checkpoint {

// Every departure from the schema, one line each naming the file and object; empty when none.
std::vector<std::string> schema_problems(const std::string& checkpoint_dir, const Manifest& manifest);

}  // namespace trainrt::checkpoint
