#pragma once
// Opening a committed checkpoint for restore: the manifest, then block reads on demand.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "checkpoint/format/manifest.hpp"
#include "checkpoint/read/verify.hpp"
#include "trainrt/checkpoint.hpp"

namespace trainrt {

struct Checkpoint::Impl {
    std::string path;
    checkpoint::Manifest manifest;
    mutable std::atomic<double> read_seconds{0.0};  // time spent in Checkpoint::read
    // The restoring rank's own file, kept from its verification: blocks stored in it are copied
    // from memory until each of its parts' bytes was read once, then it is freed. Where each part
    // lies in it is what the file's schema check found (KeptImage::addresses: no HDF5 open per
    // read); a part not there is read elsewhere (stored in another type or shape). In the shared
    // layout, the ranges of the shared file this rank wrote instead (KeptImage::ranges), each
    // freed once its datasets' bytes were read.
    mutable std::mutex image_mutex;
    mutable checkpoint::KeptImage kept;
    mutable std::uint64_t kept_unread = 0;  // bytes of its parts not yet read
    // Replicated parts other ranks stored, received from them at restore (replicated_exchange.hpp),
    // by (file, dataset): each the part's elements, row-major, in the tensor's type. Read from
    // here instead of their files; freed, under image_mutex, once as many bytes were read.
    mutable std::map<std::pair<std::string, std::string>, std::vector<char>> received;
    mutable std::uint64_t received_unread = 0;
    // Threads a large block's copy out of memory may use (copy_block): the restoring rank's
    // compute_threads, 1 for a checkpoint opened outside a restore.
    int copy_threads = 1;
    // Frees the kept image once read (checkpoint::release_later); joined here.
    mutable std::thread releasing;
    Impl() = default;
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
    ~Impl();
};

namespace checkpoint {

// Reads the manifest of `dir` (no data verification: see verify.hpp for that).
Checkpoint open_checkpoint(const std::string& dir);
// The checkpoint in `dir` whose manifest (`manifest`) was read and whose files were verified,
// still open to changes (a restore's exchange of replicated parts) before it becomes a
// Checkpoint. `kept`: a file of it in memory, with where its datasets lie, read from there;
// `copy_threads`: Impl::copy_threads.
std::shared_ptr<Checkpoint::Impl> open_checkpoint_impl(const std::string& dir, Manifest manifest, KeptImage kept,
                                                       int copy_threads);

// Where `part` (of a tensor of `type`) lies in the kept image of its file, as one contiguous
// block in memory's representation; null when it is not there (another file, no image, another
// stored type or shape). The caller holds impl.image_mutex where reads may run at the same time.
const char* image_bytes_of(const Checkpoint::Impl& impl, const PartEntry& part, TensorType type);

// Bytes [offset, offset + length) of a file.
struct ByteSpan {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};
// Where the elements [start, start + count) of `part` lie in the kept ranges' file (kept.ranges_file,
// at the dataset's place in kept.addresses), when they are whole rows of it (every later dimension
// complete: one contiguous span); nullopt otherwise (another file or type, no known place).
std::optional<ByteSpan> rows_in_file(const Checkpoint::Impl& impl, const PartEntry& part, TensorType type,
                                     const Shape& start, const Shape& count);

// Frees `image` on a thread of its own: giving a GiB back to the kernel takes some 0.05 s, which
// the reader (a restore's last read, then the first training step) need not wait for. Inline
// when no thread can be started. The caller holds impl.image_mutex.
void release_later(const Checkpoint::Impl& impl, storage::FileImage image);

}  // namespace checkpoint
}  // namespace trainrt
