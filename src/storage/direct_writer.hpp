#pragma once
// A file's large writes without the page cache: the bytes are copied into a few reused, aligned
// buffers and written from them with O_DIRECT by writer threads, several writes in flight.
//
// Why: a buffered write copies every byte into fresh page-cache pages, which costs CPU in
// proportion to the bytes whatever the disk could do; on a node whose cores all train, an async
// save's writing takes that CPU from the training. Written through reused buffers with O_DIRECT,
// the same save takes less time and less CPU (the checkpoint bench, BENCHMARKS.md).
//
// Contract: the bytes written with write() that lie back to back form a run. A run's whole 4 KiB
// blocks go out with O_DIRECT; its first and last partial blocks go through the page cache
// (pwrite), because the rest of those blocks may hold bytes that another writer owns (HDF5's
// metadata next to a tensor's data). So the file may be written by others too, as long as no one
// else writes inside the runs. Nothing is durable before the caller's fsync of the file.
// On a memory filesystem (tmpfs, ramfs: O_DIRECT there is a copy more), where the filesystem
// refuses O_DIRECT, or where it is not trusted coherent (page_coherence.hpp), every write is a
// plain pwrite from the caller's memory.
//
// Why not O_DIRECT on an untrusted filesystem: a client's own cache may keep blocks of the file
// that the O_DIRECT writes then replace, without dropping them (shown with ceph-fuse: a client
// that had read a range, then written it with O_DIRECT, went on serving the old bytes for it;
// the buffered writes around each run, HDF5's among them, give a client such a range to keep).
// Seen on CephFS through ceph-fuse: each rank's client went on serving zeros for its own file's
// data (`file_per_rank`) from its own cache
// (echo 3 > drop_caches left them: the cache is ceph-fuse's), while every other client read the
// data; a restore in which another rank read the replicated parts stored there through that
// client (`replicated_reads = files`) trained on them (tests/checkpoint/test_cephfs.sh). Written
// through the client's cache, the bytes are what every client reads.
//
// Why the copy into the buffers even where the caller's memory could go to the disk itself (tried:
// an async save's page-aligned host copy, HDF5 aligning large datasets to 4 KiB, the whole blocks
// written with O_DIRECT from the copy): the save was slower and the training step's stall no
// smaller. The copy's pages are 4 KiB ones, and virtio-blk takes one segment per page; the
// buffers' are huge pages. The memcpy saved did not pay for that.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "storage/page_buffer.hpp"
#include "storage/posix.hpp"

namespace trainrt::storage {

class DirectWriter {
public:
    // `path` exists (the caller created it); it is opened again for these writes.
    explicit DirectWriter(const std::string& path);
    ~DirectWriter();  // waits for the writes in flight (their failures dropped); never throws
    DirectWriter(const DirectWriter&) = delete;
    DirectWriter& operator=(const DirectWriter&) = delete;

    // Bytes [offset, offset + length) of the file from `data`, which may change once this returns.
    // StorageError (with strerror) for a write that failed, this one's or an earlier one's.
    void write(std::uint64_t offset, const void* data, std::uint64_t length);
    // Writes what is gathered and waits for every write: StorageError for the first that failed.
    void finish();
    bool direct() const { return direct_.get() >= 0; }  // O_DIRECT is used

    static constexpr std::uint64_t kBlock = 4096;            // O_DIRECT's offset and length unit
    static constexpr std::uint64_t kChunkBytes = 8ull << 20;  // one write in flight
    static constexpr int kChunks = 4;                         // buffers: one filled, the rest in flight

private:
    struct Job {
        int chunk;
        std::uint64_t offset, length;
    };
    void end_run();
    void append(const char* data, std::uint64_t length);
    void submit(std::uint64_t length);
    int take_free_chunk();
    void write_chunks();
    void throw_if_failed();
    void remember_failure(const std::string& message);
    char* chunk_data(int chunk) const;

    std::string path_;
    Fd buffered_, direct_;
    PageBuffer buffers_;  // kChunks chunks, from a pool the process keeps: their pages stay hot
    // The run being gathered: chunk `open_` holds bytes [open_offset_, open_offset_ + filled_) of
    // the file (open_offset_ a block boundary); -1 when no run is open.
    int open_ = -1;
    std::uint64_t open_offset_ = 0, filled_ = 0;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Job> jobs_;
    std::vector<int> free_;
    int in_flight_ = 0;
    bool closing_ = false;
    std::string failure_;  // the first write's failure, for finish() and write()
    std::vector<std::thread> threads_;  // started at the first chunk submitted
};

// `from` copied to `to` (created or truncated) through a DirectWriter: the source taken from its
// pages where its filesystem keeps them in memory (a node-local checkpoint in /dev/shm), else read
// in pieces. Not fsynced: the caller makes it durable. StorageError (with strerror) on failure.
void copy_file_direct(const std::string& from, const std::string& to);

}  // namespace trainrt::storage
