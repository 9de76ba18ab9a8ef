#pragma once
// Reads given rows of a split's columns in row order, never the whole file: each read is one
// contiguous block of rows (see read()), which is HDF5's fast path for chunked datasets.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "data/dataset_file.hpp"
#include "h5/h5.hpp"
#include "storage/posix.hpp"

namespace trainrt::data {

class RowReader {
public:
    // Opens `columns` of `split` (their infos, from the file's DatasetInfo).
    RowReader(const std::string& path, const std::string& split, std::vector<ColumnInfo> columns);
    const std::vector<ColumnInfo>& columns() const { return columns_; }
    // Rows `rows` (ascending, unique) of column `c` into `out` (rows.size() * sample bytes).
    // Not thread-safe (scratch memory): one reader per thread.
    void read(std::size_t c, std::span<const std::uint64_t> rows, std::byte* out) const;
    // Asks the kernel to start reading the file bytes of `rows` (ascending) of every column now
    // (posix_fadvise WILLNEED), so that a later read() finds them in the page cache: the stream
    // hints a span while the one before is still being consumed, and a shuffle's scattered
    // reads reach the disk together instead of one after another. Only a hint: nothing fails.
    void advise(std::span<const std::uint64_t> rows) const;

private:
    struct CachedChunk {
        std::uint64_t index = ~0ull;
        std::uint64_t used = 0;
        std::vector<std::byte> bytes;
    };
    struct ChunkCache {  // compressed columns only (capacity 0 otherwise)
        std::size_t capacity = 0;
        std::uint64_t clock = 0;
        std::vector<CachedChunk> entries;
    };

    struct Extent {  // bytes of the file
        std::uint64_t offset = 0, bytes = 0;
    };
    static constexpr std::uint64_t kUnknown = ~0ull;
    Extent chunk_extent(std::size_t c, std::uint64_t chunk) const;  // bytes 0: not allocated
    void sample_extents(std::size_t c, std::span<const std::uint64_t> rows, std::vector<Extent>& out) const;
    void read_block(std::size_t c, std::uint64_t first, std::uint64_t count, std::byte* out) const;
    void read_through_chunks(std::size_t c, std::span<const std::uint64_t> rows, std::byte* out) const;
    const std::byte* cached_chunk(std::size_t c, std::uint64_t chunk) const;

    std::string path_;
    std::string split_;
    std::vector<ColumnInfo> columns_;
    h5::File file_;
    std::vector<h5::Dataset> datasets_;
    std::vector<h5::Datatype> memory_types_;
    std::vector<std::vector<hsize_t>> shapes_;
    std::vector<std::string> what_;  // "FILE: /split/column", for errors
    mutable std::vector<std::byte> scratch_;
    mutable std::vector<ChunkCache> chunks_;
    storage::Fd hint_fd_;                                  // the file, for posix_fadvise
    mutable bool hinting_ = true;
    std::vector<std::uint64_t> contiguous_offset_;         // per column: its data's offset when not chunked
    mutable std::vector<std::vector<Extent>> chunk_extents_;  // per column: chunks looked up so far
};

}  // namespace trainrt::data
