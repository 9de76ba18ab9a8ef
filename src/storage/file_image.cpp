#include "storage/file_image.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "storage/page_coherence.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::storage {
namespace {

constexpr std::size_t kAlign = 4096;         // O_DIRECT's buffer, offset and length alignment
constexpr std::size_t kChunk = 8 << 20;      // one read in flight
constexpr int kReaders = 2;                  // reads in flight: the disk always has the next one

std::uint64_t round_up(std::uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Chunks read by kReaders threads, handed to the caller in file order.
class ChunkReads {
public:
    // Bytes [from, from + size) of the file into data; `from` aligned as O_DIRECT needs.
    ChunkReads(int fd, char* data, std::uint64_t size, std::uint64_t from) : fd_(fd), data_(data), size_(size),
        from_(from), state_((size + kChunk - 1) / kChunk, kPending) {}

    void start() {
        threads_.emplace_back([this] { populate(); });
        for (int i = 0; i < kReaders; ++i) threads_.emplace_back([this] { read_chunks(); });
    }
    // Blocks until chunk k is read: 0, or the errno that failed it.
    int wait(std::size_t k) {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [&] { return state_[k] != kPending; });
        return state_[k] == kDone ? 0 : state_[k];
    }
    std::size_t chunks() const { return state_.size(); }
    ~ChunkReads() {
        stop_ = true;
        for (std::thread& thread : threads_) thread.join();
    }

private:
    static constexpr int kPending = -1, kDone = -2;

    // Fresh memory's pages are allocated on first touch, one fault each: here ahead of the reads,
    // while they wait for the disk (a read reaching pages not yet there faults them itself).
    // Kernels before 5.14 have no MADV_POPULATE_WRITE: the reads fault them, as without this.
    void populate() {
        for (std::uint64_t offset = 0; !stop_ && offset < size_; offset += kChunk) {
            const std::uint64_t length = round_up(std::min<std::uint64_t>(kChunk, size_ - offset));
            if (::madvise(data_ + offset, length, MADV_POPULATE_WRITE) != 0) return;
        }
    }

    void read_chunks() {
        for (std::size_t k; !stop_ && (k = next_++) < state_.size();) {
            const std::uint64_t offset = k * kChunk;
            const std::uint64_t want = std::min<std::uint64_t>(kChunk, size_ - offset);
            const int result = read_chunk(offset, round_up(want), want);
            std::lock_guard<std::mutex> lock(mutex_);
            state_[k] = result;
            ready_.notify_all();
        }
    }
    // kDone, or an errno (EIO for a file shorter than its size said).
    int read_chunk(std::uint64_t offset, std::uint64_t length, std::uint64_t want) {
        std::uint64_t got = 0;
        while (got < want) {
            const ssize_t n = ::pread(fd_, data_ + offset + got, length - got, static_cast<off_t>(from_ + offset + got));
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return errno;
            if (n == 0) return EIO;
            got += static_cast<std::uint64_t>(n);
        }
        return kDone;
    }

    int fd_;
    char* data_;
    std::uint64_t size_;
    std::uint64_t from_;
    std::vector<int> state_;
    std::atomic<std::size_t> next_{0};
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::condition_variable ready_;
    std::vector<std::thread> threads_;
};

}  // namespace

FileImage::~FileImage() { reset(); }

FileImage::FileImage(FileImage&& other) noexcept
    : data_(other.data_), size_(other.size_), direct_(other.direct_), buffer_(std::move(other.buffer_)),
      mapped_(std::move(other.mapped_)) {
    other.data_ = nullptr;
    other.size_ = 0;
}

FileImage& FileImage::operator=(FileImage&& other) noexcept {
    if (this != &other) {
        reset();
        data_ = other.data_, size_ = other.size_, direct_ = other.direct_;
        buffer_ = std::move(other.buffer_);
        mapped_ = std::move(other.mapped_);
        other.data_ = nullptr;
        other.size_ = 0;
    }
    return *this;
}

void FileImage::reset() noexcept {
    buffer_ = PageBuffer();
    mapped_ = MappedFile();
    data_ = nullptr;
    size_ = 0;
}

namespace {

// Opens `path` for the image: O_DIRECT unless `buffered` or the filesystem refuses it (tmpfs).
Fd open_for_image(const std::string& path, bool buffered, bool& direct) {
    int raw = buffered ? -1 : ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    direct = raw >= 0;
    if (raw < 0 && (buffered || errno == EINVAL)) raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (raw < 0) throw StorageError(fmt::format("storage: cannot open {}: {}", path, std::strerror(errno)));
    if (!direct) {
        forget_foreign_pages(raw);  // O_DIRECT reads bypass this node's cache; buffered ones not
        ::posix_fadvise(raw, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
    return Fd(raw);
}

// One pass over bytes [from, from + size) of the file into `data`, `consume` called on them from
// byte `skip` on: 0, or the errno of the read that failed.
int read_pass(int fd, char* data, std::uint64_t from, std::uint64_t size, std::uint64_t skip,
              const std::function<void(const char*, std::size_t)>& consume) {
    ChunkReads reads(fd, data, size, from);
    reads.start();
    for (std::size_t k = 0; k < reads.chunks(); ++k) {
        if (const int error = reads.wait(k); error != 0) return error;
        const std::uint64_t begin = std::max<std::uint64_t>(k * kChunk, skip);
        const std::uint64_t end = std::min<std::uint64_t>((k + 1) * kChunk, size);
        if (begin < end) consume(data + begin, static_cast<std::size_t>(end - begin));
    }
    return 0;
}

std::uint64_t file_size(int fd, const std::string& path) {
    struct stat info {};
    if (::fstat(fd, &info) != 0)
        throw StorageError(fmt::format("storage: cannot stat {}: {}", path, std::strerror(errno)));
    return static_cast<std::uint64_t>(info.st_size);
}

// Bytes [offset, offset + length) of `size` fit in the file, or a StorageError.
void check_inside(const std::string& path, std::uint64_t size, std::uint64_t offset, std::uint64_t length) {
    if (offset > size || length > size - offset)
        throw StorageError(fmt::format("storage: {} ends at byte {}, before {}", path, size, offset + length));
}

}  // namespace

// `length` null: to the file's end.
FileImage read_image(const std::string& path, std::uint64_t offset, const std::uint64_t* length,
                     const std::function<void()>& restart, const std::function<void(const char*, std::size_t)>& consume) {
    FileImage image;
    if (std::optional<MappedFile> mapped = map_if_in_memory(open_or_throw(path, O_RDONLY).get(), path)) {
        const std::uint64_t wanted = length != nullptr ? *length : mapped->size() - std::min(offset, mapped->size());
        check_inside(path, mapped->size(), offset, wanted);
        restart();
        for (std::uint64_t at = 0; at < wanted; at += kChunk)
            consume(mapped->data() + offset + at, static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, wanted - at)));
        image.data_ = const_cast<char*>(mapped->data()) + offset;
        image.size_ = wanted;
        image.mapped_ = std::move(*mapped);
        return image;
    }
    for (bool buffered : {false, true}) {
        Fd fd = open_for_image(path, buffered, image.direct_);
        const std::uint64_t size = file_size(fd.get(), path);
        const std::uint64_t wanted = length != nullptr ? *length : size - std::min(offset, size);
        check_inside(path, size, offset, wanted);
        image.reset();
        if (wanted == 0) return image;
        const std::uint64_t from = offset / kAlign * kAlign, skip = offset - from;
        image.buffer_ = allocate_page_buffer(round_up(skip + wanted), path);
        image.data_ = image.buffer_.data() + skip;
        image.size_ = wanted;
        restart();
        const int error = read_pass(fd.get(), image.buffer_.data(), from, skip + wanted, skip, consume);
        if (error == 0) return image;
        // A filesystem that opens with O_DIRECT but refuses its reads: read it as any file.
        if (!(error == EINVAL && image.direct_))
            throw StorageError(fmt::format("storage: reading {} failed: {}", path, std::strerror(error)));
    }
    throw StorageError(fmt::format("storage: reading {} failed", path));
}

FileImage read_file_image(const std::string& path, const std::function<void()>& restart,
                          const std::function<void(const char*, std::size_t)>& consume) {
    return read_image(path, 0, nullptr, restart, consume);
}

FileImage read_file_range_image(const std::string& path, std::uint64_t offset, std::uint64_t length,
                                const std::function<void()>& restart,
                                const std::function<void(const char*, std::size_t)>& consume) {
    return read_image(path, offset, &length, restart, consume);
}

std::uint64_t available_memory_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::uint64_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit)
        if (key == "MemAvailable:") return kib * 1024;
    return 0;
}

}  // namespace trainrt::storage
