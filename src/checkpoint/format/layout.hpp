#pragma once
// The files of a checkpoint directory. Two layouts, one schema (hdf5_schemas/checkpoint.md), one
// reader:
//   file_per_rank: rank r writes rank_<r>.h5 with its blocks (its share of the replicated tensors
//                  too: write/write_plan.hpp);
//   shared:        all ranks write data.h5 together through parallel HDF5 (MPI-IO collective),
//                  each its blocks of the same plan.
// Here what both the writers (write/layout_writer.hpp) and the readers rely on: the files' and
// datasets' names, the types and attributes in them, and the files' checksums as the manifest
// records them.
#include <cstdint>
#include <string>
#include <vector>

#include <hdf5.h>

#include "checkpoint/format/manifest.hpp"
#include "storage/file_image.hpp"
#include "trainrt/checkpoint.hpp"

namespace trainrt::checkpoint {

// "rank_00003.h5": the file rank `rank` writes in the file_per_rank layout.
std::string rank_file_name(int rank);

// Size and XXH3-64 of a whole file, read sequentially.
FileEntry describe_file(const std::string& dir, const std::string& name);
// XXH3-64 of one range of a file (StorageError if the file ends before it).
std::string describe_range(const std::string& dir, const std::string& name, const ChecksumRange& range);
// The checksums of `file`'s ranges (checksum_ranges) from the file read into `image`, which the
// caller keeps: a restore then copies its blocks from memory, and the file is read from the
// disk once (storage/file_image.hpp). A range past the file's end gets "".
std::vector<std::string> describe_file_image(const std::string& dir, const FileEntry& file, storage::FileImage& image);
// describe_range() from one read of the range into `image`, which the caller keeps (a shared
// file's range that a restoring rank wrote: its blocks are then copied from memory).
std::string describe_range_image(const std::string& dir, const std::string& name, const ChecksumRange& range,
                                 storage::FileImage& image);
// Bytes of a file known to equal a piece of memory: a dataset's data, just written from it.
struct WrittenRegion {
    std::uint64_t offset = 0;  // in the file
    std::uint64_t length = 0;
    const void* data = nullptr;
};
// describe_file() of a file whose `regions` were written from memory that has not changed since:
// those bytes are hashed from memory, the rest (HDF5's metadata) read from the file, all in file
// order, so the digest is the file's. A region that overlaps another or passes the file's end is
// read from the file instead. `runs`: checksums already taken of runs of its bytes (RunHasher);
// each run of at least 1 MiB is then a range of its own and the bytes between them are hashed as
// ranges, so the entry has `ranges` (one reader still verifies them all: read/verify.hpp).
FileEntry describe_written_file(const std::string& dir, const std::string& name, std::vector<WrittenRegion> regions,
                                const std::vector<ChecksumRange>& runs = {});
// describe_range() the same way: the regions' bytes inside the range (a region may cross its
// ends) from memory, the rest read. StorageError when the file ends before the range does.
std::string describe_written_range(const std::string& dir, const std::string& name, const ChecksumRange& range,
                                   std::vector<WrittenRegion> regions);
// fsync of the file, and describe_written_file() of it at the same time: the fsync waits for the
// disk, the hash reads the caller's memory (and the page cache for the rest), so the hash costs no
// time of its own and no pass over the written bytes in the page cache.
FileEntry sync_and_describe_file(const std::string& dir, const std::string& name, std::vector<WrittenRegion> regions = {},
                                 const std::vector<ChecksumRange>& runs = {});

// The HDF5 dataset path of a tensor inside a checkpoint file: "/tensors/<name>".
std::string dataset_path(const std::string& tensor_name);

// HDF5 types of a TensorType: little-endian in the file, native in memory.
hid_t file_type(TensorType type);
hid_t memory_type(TensorType type);

// Attributes on every checkpoint data file's root and tensor datasets (schema: checkpoint.md).
inline constexpr const char* kDataFormat = "trainrt-checkpoint-data";
void write_shape_attribute(hid_t object, const std::string& name, const Shape& shape);

}  // namespace trainrt::checkpoint
