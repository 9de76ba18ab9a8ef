#include "data/row_reader.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "data/h5_types.hpp"
#include "h5/io.hpp"
#include "h5/props.hpp"
#include "trainrt/error.hpp"

namespace trainrt::data {
namespace {

constexpr std::size_t kMergeGapBytes = 64u << 10;
constexpr std::size_t kMaxSegmentBytes = 8u << 20;
constexpr std::size_t kChunkCacheBytes = 16u << 20;  // decompressed chunks kept per column

// HDF5's own chunk cache is off: with it, HDF5 1.10 kept every chunk a partial read touched
// (RSS grew by the whole dataset in one epoch, whatever rdcc_nbytes said), and plain chunks are
// read straight from the file without it anyway. Compressed chunks are cached by RowReader.
h5::PropertyList dataset_access(const ColumnInfo& column) { return h5::uncached_dataset_access(column.name); }

bool compressed(hid_t dataset) { return h5::filter_count(dataset, "filters") > 0; }

}  // namespace

RowReader::RowReader(const std::string& path, const std::string& split, std::vector<ColumnInfo> columns)
    : path_(path), split_(split), columns_(std::move(columns)), file_(h5::open_file(path, false)) {
    h5::Group group = h5::open_group(file_.get(), split);
    for (const ColumnInfo& column : columns_) {
        h5::PropertyList dapl = dataset_access(column);
        datasets_.push_back(h5::open_dataset_with(group.get(), column.name, dapl.get(),
                                                  fmt::format("{}: /{}/{}", path, split, column.name)));
        memory_types_.push_back(memory_type(column.type));
        shapes_.push_back(h5::dataset_shape(datasets_.back().get()));
        chunks_.emplace_back();
        if (column.chunk_rows > 0 && compressed(datasets_.back().get()))
            chunks_.back().capacity = std::max<std::size_t>(2, kChunkCacheBytes / std::max<std::size_t>(1, column.chunk_rows * column.sample_bytes()));
        what_.push_back(fmt::format("{}: /{}/{}", path, split, column.name));
        // Unchunked (version-1 files): H5Dget_offset's HADDR_UNDEF (not allocated) means no hints.
        const hid_t dataset = datasets_.back().get();
        const haddr_t offset = column.chunk_rows > 0 ? HADDR_UNDEF : h5::data_offset(dataset);
        contiguous_offset_.push_back(offset == HADDR_UNDEF ? kUnknown : offset);
        chunk_extents_.emplace_back();
    }
    hint_fd_ = storage::open_or_throw(path, O_RDONLY);
}

// HDF5 1.10 reads a single-block selection of a chunked dataset fast (a 64-row span: ~7 us) and a
// selection of many blocks slowly (32 strided or scattered rows: ~1 ms, from building per-chunk
// span trees). So rows are read as segments, one block each: runs of rows merged across gaps of
// up to kMergeGapBytes (reading the gap costs less than another call), at most kMaxSegmentBytes
// long; a segment with gaps is read into scratch memory and its rows copied out.
void RowReader::read(std::size_t c, std::span<const std::uint64_t> rows, std::byte* out) const {
    if (rows.empty()) return;
    if (chunks_[c].capacity > 0) return read_through_chunks(c, rows, out);
    const std::size_t sample = std::max<std::size_t>(1, columns_.at(c).sample_bytes());
    const std::uint64_t gap_rows = kMergeGapBytes / sample, max_rows = std::max<std::size_t>(1, kMaxSegmentBytes / sample);
    for (std::size_t begin = 0; begin < rows.size();) {
        std::size_t end = begin + 1;
        while (end < rows.size() && rows[end] - rows[end - 1] - 1 <= gap_rows && rows[end] - rows[begin] < max_rows)
            ++end;
        const std::uint64_t first = rows[begin], span = rows[end - 1] - first + 1;
        if (span == end - begin) {
            read_block(c, first, span, out + begin * sample);
        } else {
            scratch_.resize(span * sample);
            read_block(c, first, span, scratch_.data());
            for (std::size_t i = begin; i < end; ++i)
                std::memcpy(out + i * sample, scratch_.data() + (rows[i] - first) * sample, sample);
        }
        begin = end;
    }
}

// Compressed columns: each row copied out of its whole chunk, decompressed once into a small LRU
// of chunks (a partial read would make HDF5 decompress the chunk again for every read).
void RowReader::read_through_chunks(std::size_t c, std::span<const std::uint64_t> rows, std::byte* out) const {
    const std::size_t sample = columns_[c].sample_bytes();
    const std::uint64_t chunk_rows = columns_[c].chunk_rows;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::uint64_t chunk = rows[i] / chunk_rows;
        const std::byte* data = cached_chunk(c, chunk);
        std::memcpy(out + i * sample, data + (rows[i] - chunk * chunk_rows) * sample, sample);
    }
}

const std::byte* RowReader::cached_chunk(std::size_t c, std::uint64_t chunk) const {
    ChunkCache& cache = chunks_[c];
    ++cache.clock;
    for (CachedChunk& entry : cache.entries)
        if (entry.index == chunk) {
            entry.used = cache.clock;
            return entry.bytes.data();
        }
    if (cache.entries.size() < cache.capacity) cache.entries.emplace_back();
    CachedChunk& slot = *std::min_element(cache.entries.begin(), cache.entries.end(),
                                          [](const CachedChunk& a, const CachedChunk& b) { return a.used < b.used; });
    const std::uint64_t chunk_rows = columns_[c].chunk_rows, first = chunk * chunk_rows;
    const std::uint64_t count = std::min<std::uint64_t>(chunk_rows, shapes_[c][0] - first);
    slot.bytes.resize(count * columns_[c].sample_bytes());
    slot.index = ~0ull;  // not valid while it is being read
    read_block(c, first, count, slot.bytes.data());
    slot.index = chunk, slot.used = cache.clock;
    return slot.bytes.data();
}

RowReader::Extent RowReader::chunk_extent(std::size_t c, std::uint64_t chunk) const {
    std::vector<Extent>& known = chunk_extents_[c];
    if (known.size() <= chunk) known.resize(chunk + 1, Extent{kUnknown, 0});
    if (known[chunk].offset != kUnknown) return known[chunk];
    std::vector<hsize_t> coords(shapes_[c].size(), 0);
    coords[0] = chunk * columns_[c].chunk_rows;
    const h5::ChunkPlace place = h5::chunk_place(datasets_[c].get(), coords, what_[c]);
    known[chunk] = place.address == HADDR_UNDEF ? Extent{0, 0} : Extent{place.address, place.bytes};
    return known[chunk];
}

// The file bytes a read of `rows` of column `c` needs: each sample's bytes where a chunk holds
// whole samples uncompressed, else the whole chunk.
void RowReader::sample_extents(std::size_t c, std::span<const std::uint64_t> rows, std::vector<Extent>& out) const {
    const std::uint64_t sample = columns_[c].sample_bytes(), chunk_rows = columns_[c].chunk_rows;
    for (std::uint64_t row : rows) {
        if (chunk_rows == 0) {
            if (contiguous_offset_[c] != kUnknown) out.push_back({contiguous_offset_[c] + row * sample, sample});
            continue;
        }
        const Extent chunk = chunk_extent(c, row / chunk_rows);
        if (chunk.bytes == chunk_rows * sample) out.push_back({chunk.offset + (row % chunk_rows) * sample, sample});
        else if (chunk.bytes > 0 && (out.empty() || out.back().offset != chunk.offset)) out.push_back(chunk);
    }
}

void RowReader::advise(std::span<const std::uint64_t> rows) const {
    if (!hinting_) return;
    std::vector<Extent> extents;
    try {
        for (std::size_t c = 0; c < columns_.size(); ++c) sample_extents(c, rows, extents);
    } catch (const H5Error&) {
        hinting_ = false;  // HDF5 cannot say where the chunks are: read without hints
        return;
    }
    std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) { return a.offset < b.offset; });
    for (std::size_t i = 0; i < extents.size();) {
        std::uint64_t begin = extents[i].offset, end = begin + extents[i].bytes;
        for (++i; i < extents.size() && extents[i].offset <= end + kMergeGapBytes; ++i)
            end = std::max(end, extents[i].offset + extents[i].bytes);
        ::posix_fadvise(hint_fd_.get(), static_cast<off_t>(begin), static_cast<off_t>(end - begin), POSIX_FADV_WILLNEED);
    }
}

void RowReader::read_block(std::size_t c, std::uint64_t first, std::uint64_t count, std::byte* out) const {
    h5::Block block{std::vector<hsize_t>(shapes_[c].size(), 0), shapes_[c]};
    block.start[0] = first, block.count[0] = count;
    h5::read_block(datasets_[c].get(), memory_types_[c].get(), block, out, what_[c]);
}

}  // namespace trainrt::data
