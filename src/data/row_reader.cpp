#include "data/row_reader.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "data/h5_types.hpp"
#include "trainrt/error.hpp"

namespace trainrt::data {
namespace {

constexpr std::size_t kMergeGapBytes = 64u << 10;
constexpr std::size_t kMaxSegmentBytes = 8u << 20;
constexpr std::size_t kChunkCacheBytes = 16u << 20;  // decompressed chunks kept per column

// HDF5's own chunk cache is off: with it, HDF5 1.10 kept every chunk a partial read touched
// (RSS grew by the whole dataset in one epoch, whatever rdcc_nbytes said), and plain chunks are
// read straight from the file without it anyway. Compressed chunks are cached by RowReader.
h5::PropertyList dataset_access(const ColumnInfo& column) {
    h5::PropertyList dapl(TRAINRT_H5(H5Pcreate(H5P_DATASET_ACCESS), column.name));
    TRAINRT_H5(H5Pset_chunk_cache(dapl.get(), 0, 0, 1.0), column.name);
    return dapl;
}

bool compressed(hid_t dataset) {
    h5::PropertyList dcpl(TRAINRT_H5(H5Dget_create_plist(dataset), "create plist"));
    return TRAINRT_H5(H5Pget_nfilters(dcpl.get()), "filters") > 0;
}

}  // namespace

RowReader::RowReader(const std::string& path, const std::string& split, std::vector<ColumnInfo> columns)
    : path_(path), split_(split), columns_(std::move(columns)), file_(h5::open_file(path, false)) {
    h5::Group group = h5::open_group(file_.get(), split);
    for (const ColumnInfo& column : columns_) {
        h5::PropertyList dapl = dataset_access(column);
        datasets_.emplace_back(TRAINRT_H5(H5Dopen2(group.get(), column.name.c_str(), dapl.get()),
                                          fmt::format("{}: /{}/{}", path, split, column.name)));
        memory_types_.push_back(memory_type(column.type));
        shapes_.push_back(h5::dataset_shape(datasets_.back().get()));
        chunks_.emplace_back();
        if (column.chunk_rows > 0 && compressed(datasets_.back().get()))
            chunks_.back().capacity = std::max<std::size_t>(2, kChunkCacheBytes / std::max<std::size_t>(1, column.chunk_rows * column.sample_bytes()));
        what_.push_back(fmt::format("{}: /{}/{}", path, split, column.name));
    }
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

void RowReader::read_block(std::size_t c, std::uint64_t first, std::uint64_t count, std::byte* out) const {
    const hid_t dataset = datasets_[c].get();
    h5::locked([&] {  // the selection and the read under the lock throughout
        h5::Dataspace file_space = h5::dataset_space(dataset);
        std::vector<hsize_t> start(shapes_[c].size(), 0), extent(shapes_[c]);
        start[0] = first, extent[0] = count;
        TRAINRT_H5(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, extent.data(), nullptr),
                   what_[c]);
        h5::Dataspace memory_space(
            TRAINRT_H5(H5Screate_simple(static_cast<int>(extent.size()), extent.data(), nullptr), what_[c]));
        TRAINRT_H5(H5Dread(dataset, memory_types_[c].get(), memory_space.get(), file_space.get(), H5P_DEFAULT, out),
                   what_[c]);
        return 0;
    });
}

}  // namespace trainrt::data
