#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "checkpoint/format/layout.hpp"
#include "checkpoint/format/xxh3.hpp"
#include "h5/h5.hpp"
#include "storage/mapped_file.hpp"
#include "storage/page_coherence.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::checkpoint {

std::string rank_file_name(int rank) { return fmt::format("rank_{:05d}.h5", rank); }

std::string dataset_path(const std::string& tensor_name) { return "/tensors/" + tensor_name; }

hid_t file_type(TensorType type) {
    switch (type) {
        case TensorType::f32: return H5T_IEEE_F32LE;
        case TensorType::f64: return H5T_IEEE_F64LE;
        case TensorType::i32: return H5T_STD_I32LE;
        case TensorType::i64: return H5T_STD_I64LE;
        case TensorType::u8: return H5T_STD_U8LE;
    }
    return H5T_STD_U8LE;
}

hid_t memory_type(TensorType type) {
    switch (type) {
        case TensorType::f32: return H5T_NATIVE_FLOAT;
        case TensorType::f64: return H5T_NATIVE_DOUBLE;
        case TensorType::i32: return H5T_NATIVE_INT32;
        case TensorType::i64: return H5T_NATIVE_INT64;
        case TensorType::u8: return H5T_NATIVE_UINT8;
    }
    return H5T_NATIVE_UINT8;
}

// A scalar tensor's shape is empty: a zero-length attribute.
void write_shape_attribute(hid_t object, const std::string& name, const Shape& shape) {
    h5::write_attribute(object, name, std::vector<std::int64_t>(shape.begin(), shape.end()));
}

namespace {

// Feeds `fd`'s bytes from `offset`, `length` of them or (kToEnd) up to the end, to `state`; the
// bytes hashed are added to `hashed`. Chunks small enough to stay in the core's cache between the
// copy and the hash; the disk reads ahead of them: every kAhead bytes the next kAhead are asked
// for (WILLNEED starts their reads and returns), so the disk never waits for the hash.
constexpr std::uint64_t kToEnd = ~std::uint64_t{0};

void feed_bytes(int fd, const std::string& path, std::uint64_t offset, std::uint64_t length, XXH3_state_t* state,
                std::uint64_t& hashed) {
    constexpr std::size_t kChunk = 512 << 10, kAhead = 32 << 20;
    std::vector<char> buffer(std::min<std::uint64_t>(kChunk, length));
    for (std::uint64_t done = 0; done < length;) {
        if (done % kAhead == 0 && length - done > kAhead)  // a short gap between regions asks for nothing
            ::posix_fadvise(fd, static_cast<off_t>(offset + done + kAhead), kAhead, POSIX_FADV_WILLNEED);
        const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, length - done));
        const ssize_t got = ::pread(fd, buffer.data(), want, static_cast<off_t>(offset + done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0)
            throw StorageError(fmt::format("checkpoint: reading {} failed: {}", path, std::strerror(errno)));
        if (got == 0 && length != kToEnd)
            throw StorageError(fmt::format("checkpoint: {} ends at byte {}, before {}", path, offset + done, offset + length));
        if (got == 0) break;
        XXH3_64bits_update(state, buffer.data(), static_cast<std::size_t>(got));
        done += static_cast<std::uint64_t>(got);
        hashed += static_cast<std::uint64_t>(got);
    }
}

// The same from the file's pages where they already are in memory (storage/mapped_file.hpp).
std::string hash_mapped(const storage::MappedFile& mapped, const std::string& path, std::uint64_t offset,
                        std::uint64_t length, std::uint64_t& hashed) {
    if (length == kToEnd) length = mapped.size() - std::min(mapped.size(), offset);
    if (offset > mapped.size() || length > mapped.size() - offset)
        throw StorageError(fmt::format("checkpoint: {} ends at byte {}, before {}", path, mapped.size(), offset + length));
    hashed += length;
    return fmt::format("{:016x}", XXH3_64bits(mapped.data() + offset, static_cast<std::size_t>(length)));
}

std::string hash_bytes(int fd, const std::string& path, std::uint64_t offset, std::uint64_t length,
                       std::uint64_t& hashed) {
    if (const std::optional<storage::MappedFile> mapped = storage::map_if_in_memory(fd, path))
        return hash_mapped(*mapped, path, offset, length, hashed);
    Xxh3State state = new_xxh3();
    feed_bytes(fd, path, offset, length, state.get(), hashed);
    return hex_digest(state.get());
}

std::uint64_t size_of(int fd, const std::string& path) {
    struct stat status {};
    if (::fstat(fd, &status) != 0)
        throw StorageError(fmt::format("checkpoint: stat of {} failed: {}", path, std::strerror(errno)));
    return static_cast<std::uint64_t>(status.st_size);
}

// The checksums of consecutive ranges from bytes handed over in file order (an image's chunks).
class RangeHasher {
public:
    explicit RangeHasher(std::vector<ChecksumRange> ranges) : ranges_(std::move(ranges)) {}
    void restart() {
        XXH3_64bits_reset(state_.get());
        digests_.clear();
        at_ = 0;
    }
    void consume(const char* bytes, std::size_t count) {
        while (count > 0 && digests_.size() < ranges_.size()) {
            const ChecksumRange& range = ranges_[digests_.size()];
            const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(count, range.offset + range.length - at_));
            XXH3_64bits_update(state_.get(), bytes, take);
            bytes += take, count -= take, at_ += take;
            if (at_ == range.offset + range.length) {
                digests_.push_back(hex_digest(state_.get()));
                XXH3_64bits_reset(state_.get());
            }
        }
    }
    // One per range; a range the bytes did not reach (a shorter file) gets "".
    std::vector<std::string> digests() {
        while (digests_.size() < ranges_.size()) digests_.push_back("");
        return digests_;
    }

private:
    std::vector<ChecksumRange> ranges_;
    Xxh3State state_ = new_xxh3();
    std::vector<std::string> digests_;
    std::uint64_t at_ = 0;
};

}  // namespace

FileEntry describe_file(const std::string& dir, const std::string& name) {
    const std::string path = dir + "/" + name;
    storage::Fd fd = storage::open_or_throw(path, O_RDONLY);
    storage::forget_foreign_pages(fd.get());
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    std::uint64_t size = 0;
    std::string xxh3 = hash_bytes(fd.get(), path, 0, kToEnd, size);
    return {name, size, std::move(xxh3), {}};
}

std::string describe_range(const std::string& dir, const std::string& name, const ChecksumRange& range) {
    const std::string path = dir + "/" + name;
    storage::Fd fd = storage::open_or_throw(path, O_RDONLY);
    storage::forget_foreign_pages(fd.get(), range.offset, range.length);
    ::posix_fadvise(fd.get(), static_cast<off_t>(range.offset), static_cast<off_t>(range.length), POSIX_FADV_SEQUENTIAL);
    std::uint64_t hashed = 0;
    return hash_bytes(fd.get(), path, range.offset, range.length, hashed);
}

std::vector<std::string> describe_file_image(const std::string& dir, const FileEntry& file, storage::FileImage& image) {
    RangeHasher hasher(checksum_ranges(file));
    image = storage::read_file_image(
        dir + "/" + file.name, [&] { hasher.restart(); },
        [&](const char* bytes, std::size_t count) { hasher.consume(bytes, count); });
    return hasher.digests();
}

std::string describe_range_image(const std::string& dir, const std::string& name, const ChecksumRange& range,
                                 storage::FileImage& image) {
    Xxh3State state = new_xxh3();
    image = storage::read_file_range_image(
        dir + "/" + name, range.offset, range.length, [&] { state = new_xxh3(); },
        [&](const char* bytes, std::size_t count) { XXH3_64bits_update(state.get(), bytes, count); });
    return hex_digest(state.get());
}

namespace {

// The XXH3-64 of bytes [from, to) of the file: the regions' bytes (clipped to it) from memory,
// the rest read, in file order. A region that overlaps the one before it is read instead.
std::string hash_written(int fd, const std::string& path, std::uint64_t from, std::uint64_t to,
                         std::vector<WrittenRegion> regions) {
    std::sort(regions.begin(), regions.end(), [](const WrittenRegion& a, const WrittenRegion& b) { return a.offset < b.offset; });
    Xxh3State state = new_xxh3();
    std::uint64_t at = from, hashed = 0;
    for (const WrittenRegion& region : regions) {
        const std::uint64_t begin = std::max(region.offset, from), end = std::min(region.offset + region.length, to);
        if (begin >= end || begin < at) continue;  // outside the range, or overlapping: read
        feed_bytes(fd, path, at, begin - at, state.get(), hashed);
        XXH3_64bits_update(state.get(), static_cast<const char*>(region.data) + (begin - region.offset),
                           static_cast<std::size_t>(end - begin));
        at = end;
    }
    feed_bytes(fd, path, at, to - at, state.get(), hashed);
    return hex_digest(state.get());
}

}  // namespace

namespace {

// The runs that become checksum ranges of their own: at least kOwnRangeBytes, inside the file,
// not overlapping the one before (any other run's bytes are hashed with the bytes around them).
std::vector<ChecksumRange> own_ranges(const std::vector<ChecksumRange>& runs, std::uint64_t size) {
    constexpr std::uint64_t kOwnRangeBytes = 1 << 20;
    std::vector<ChecksumRange> own;
    for (const ChecksumRange& run : runs) {
        const bool inside = run.offset <= size && run.length <= size - run.offset;
        const bool after = own.empty() || run.offset >= own.back().offset + own.back().length;
        if (run.length >= kOwnRangeBytes && inside && after) own.push_back(run);
    }
    return own;
}

}  // namespace

FileEntry describe_written_file(const std::string& dir, const std::string& name, std::vector<WrittenRegion> regions,
                                const std::vector<ChecksumRange>& runs) {
    const std::string path = dir + "/" + name;
    storage::Fd fd = storage::open_or_throw(path, O_RDONLY);
    const std::uint64_t size = size_of(fd.get(), path);
    std::erase_if(regions, [&](const WrittenRegion& region) { return region.length > size - std::min(size, region.offset); });
    const std::vector<ChecksumRange> own = own_ranges(runs, size);
    if (own.empty()) return {name, size, hash_written(fd.get(), path, 0, size, std::move(regions)), {}};
    FileEntry entry{name, size, "", {}};
    std::uint64_t at = 0;
    for (const ChecksumRange& run : own) {
        if (run.offset > at) entry.ranges.push_back({at, run.offset - at, hash_written(fd.get(), path, at, run.offset, regions)});
        entry.ranges.push_back(run);
        at = run.offset + run.length;
    }
    if (at < size) entry.ranges.push_back({at, size - at, hash_written(fd.get(), path, at, size, regions)});
    return entry;
}

std::string describe_written_range(const std::string& dir, const std::string& name, const ChecksumRange& range,
                                   std::vector<WrittenRegion> regions) {
    const std::string path = dir + "/" + name;
    storage::Fd fd = storage::open_or_throw(path, O_RDONLY);
    const std::uint64_t size = size_of(fd.get(), path);
    if (range.offset + range.length > size)
        throw StorageError(fmt::format("checkpoint: {} ends at byte {}, before {}", path, size, range.offset + range.length));
    std::erase_if(regions, [&](const WrittenRegion& region) { return region.length > size - std::min(size, region.offset); });
    storage::forget_foreign_pages(fd.get(), range.offset, range.length);  // the bytes between regions: other writers'
    return hash_written(fd.get(), path, range.offset, range.offset + range.length, std::move(regions));
}

FileEntry sync_and_describe_file(const std::string& dir, const std::string& name, std::vector<WrittenRegion> regions,
                                 const std::vector<ChecksumRange>& runs) {
    std::future<void> synced =
        std::async(std::launch::async, [path = dir + "/" + name] { storage::fsync_path(path); });
    // On a throw, the future's destructor waits.
    FileEntry entry = describe_written_file(dir, name, std::move(regions), runs);
    synced.get();
    return entry;
}

}  // namespace trainrt::checkpoint
