#pragma once
// Holds a committed checkpoint's files against hdf5_schemas/checkpoint.md: root attributes of
// every data file, one dataset per stored part with the part's shape and the manifest's type,
// and global_shape / replicated attributes that agree with the manifest.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/format/manifest.hpp"

namespace trainrt::checkpoint {

// Every departure from the schema, one line each naming the file and object; empty when none.
std::vector<std::string> schema_problems(const std::string& checkpoint_dir, const Manifest& manifest);

// Where a part's dataset lies in its file: the byte offset of its elements, stored contiguously
// in memory's representation of `type` and in the part's shape (so an image of the file in
// memory holds the part as it is read). By dataset path.
struct DatasetAddress {
    std::uint64_t offset = 0;
    TensorType type = TensorType::f32;
};
using DatasetAddresses = std::map<std::string, DatasetAddress>;

// A data file whose verified bytes are in memory (a restoring rank's image of its own file);
// `bytes` null: a file whose datasets' places are wanted all the same, read from the disk (the
// shared file, of which a rank holds ranges).
struct FileInMemory {
    std::string name;  // as the manifest lists it
    const char* bytes = nullptr;
    std::uint64_t size = 0;
};

// schema_problems for the data files named in `files` only (ranks that verify a checkpoint
// together each check a share). `in_memory` (when given) is checked there, not read again from
// the disk (a few reads per dataset, scattered over the file), and the datasets in it that lie as
// DatasetAddress says go into `addresses`, found while they are open for the check.
std::vector<std::string> schema_problems_of(const std::string& checkpoint_dir, const Manifest& manifest,
                                            const std::set<std::string>& files, const FileInMemory* in_memory,
                                            DatasetAddresses& addresses);

}  // namespace trainrt::checkpoint
