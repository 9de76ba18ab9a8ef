#pragma once
// The checksums of a file_per_rank file's data, taken while the file is being written. The writer
// hands over each tensor block's place in the file (a WrittenRegion) as soon as HDF5 has given it
// one, and a thread of the hasher's own hashes the block's bytes from the caller's memory while the
// writer goes on with the next slabs and blocks. Blocks that lie back to back in the file make one
// run, and each run one checksum range; a block that does not start where the run ends starts the
// next. Where the fsync after the writes is short (a memory filesystem, a fast disk), the file's
// checksums then cost no time of their own: they used to be taken after the writes.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "checkpoint/format/layout.hpp"
#include "checkpoint/format/manifest.hpp"
#include "checkpoint/format/xxh3.hpp"

namespace trainrt::checkpoint {

class RunHasher {
public:
    RunHasher();
    ~RunHasher();  // stops the thread once the batch it hashes is done, the rest unhashed; never throws
    RunHasher(const RunHasher&) = delete;
    RunHasher& operator=(const RunHasher&) = delete;

    // A block whose bytes lie at region.offset in the file exactly as in [data, data + length),
    // memory that does not change until finish() returns. In the order the writer placed them.
    void add(const WrittenRegion& region);
    // Waits for every region added: the runs, each with the XXH3-64 of its bytes, by offset.
    std::vector<ChecksumRange> finish();

private:
    // The thread is woken once this many bytes wait (or at the end), not for every small block:
    // thousands of wake-ups cost the writer more than hashing small blocks later does.
    static constexpr std::uint64_t kWakeBytes = 1 << 20;
    void hash_added();
    void hash(const WrittenRegion& region);
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<WrittenRegion> waiting_;
    std::uint64_t waiting_bytes_ = 0;
    bool closed_ = false;     // finish() called or destroyed: no more regions
    bool abandoned_ = false;  // destroyed: the waiting regions are dropped
    std::vector<ChecksumRange> runs_;  // the thread's until finish() has joined it
    ChecksumRange run_;                // the run being hashed, into state_
    Xxh3State state_ = new_xxh3();
    std::thread thread_;      // last: started once the members it uses exist
};

}  // namespace trainrt::checkpoint
