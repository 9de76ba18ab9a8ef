#pragma once
// A tensor block written into its HDF5 dataset. A block whose bytes lie in the file as in memory
// (both layouts' blocks split along the first dimension) goes out through a storage::DirectWriter
// at the dataset's address: O_DIRECT from reused buffers, no page-cache copy. Any other block
// (split along a later dimension, stored in another type) is written by HDF5 in slabs of about
// kSlabBytes (whole rows of its first dimension); after each slab the disk write of its bytes is
// started (storage::WritebackWindow: small blocks gathered into one start per window), so the
// disk writes slab k while slab k+1 is copied into the page cache and the writer is never
// throttled by the kernel for holding a whole tensor's worth of dirty pages.
#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "checkpoint/format/layout.hpp"
#include "storage/direct_writer.hpp"
#include "storage/posix.hpp"
#include "trainrt/checkpoint.hpp"

namespace trainrt::checkpoint {

inline constexpr std::uint64_t kSlabBytes = 64ull << 20;

// Where a block goes: its dataset (the block's own shape in a file_per_rank file, the tensor's
// global shape in the shared file), the block's first element in it, the transfer properties
// (independent MPI-IO for the shared file) and a descriptor of the same file for the writeback.
struct SlabTarget {
    hid_t dataset = -1;
    Shape offset;
    hid_t transfer = H5P_DEFAULT;
    storage::WritebackWindow* writeback = nullptr;  // of the same file, for slabs' disk writes
    // Of the same file: a block that lies in the file as in memory, in a dataset whose place is
    // allocated at its creation, is written by it instead of HDF5 (no page-cache copy).
    storage::DirectWriter* direct = nullptr;
    std::string path;  // for messages
    // Called once with the block's region (see below) as soon as its place in the file is known,
    // after its first slab, while the others are still to be written (RunHasher).
    std::function<void(const WrittenRegion&)> placed;
};

// H5Error naming the tensor when a slab's write fails (StorageError when a direct write does) (the slabs before it are in the file).
// Returns where the block's bytes lie in the file when they are there exactly as in memory (the
// file's type is the native one, the block spans every later dimension of its dataset), so that
// the file's checksum can take them from memory (describe_written_file); nullopt otherwise.
std::optional<WrittenRegion> write_in_slabs(const TensorPart& part, const SlabTarget& target);

}  // namespace trainrt::checkpoint
