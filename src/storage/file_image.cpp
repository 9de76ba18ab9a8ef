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
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::storage {
namespace {

constexpr std::size_t kAlign = 4096;         // O_DIRECT's buffer, offset and length alignment
constexpr std::size_t kChunk = 8 << 20;      // one read in flight
constexpr int kReaders = 2;                  // reads in flight: the disk always has the next one

std::uint64_t round_up(std::uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Chunks filled by kReaders threads (`fill`: 0 or an errno), handed to the caller in file order.
class ChunkReads {
public:
    using Fill = std::function<int(std::uint64_t offset, std::uint64_t want)>;
    ChunkReads(std::uint64_t size, Fill fill) : size_(size), fill_(std::move(fill)),
        state_((size + kChunk - 1) / kChunk, kPending) {}

    // `before`, when given, runs on a thread of its own beside the reads (it checks stopping()).
    void start(const std::function<void()>& before = {}) {
        if (before) threads_.emplace_back(before);
        for (int i = 0; i < kReaders; ++i) threads_.emplace_back([this] { read_chunks(); });
    }
    // Blocks until chunk k is read: 0, or the errno that failed it.
    int wait(std::size_t k) {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [&] { return state_[k] != kPending; });
        return state_[k] == kDone ? 0 : state_[k];
    }
    std::size_t chunks() const { return state_.size(); }
    bool stopping() const { return stop_; }
    ~ChunkReads() {
        stop_ = true;
        for (std::thread& thread : threads_) thread.join();
    }

private:
    static constexpr int kPending = -1, kDone = -2;

    void read_chunks() {
        for (std::size_t k; !stop_ && (k = next_++) < state_.size();) {
            const std::uint64_t offset = k * kChunk;
            const int error = fill_(offset, std::min<std::uint64_t>(kChunk, size_ - offset));
            std::lock_guard<std::mutex> lock(mutex_);
            state_[k] = error == 0 ? kDone : error;
            ready_.notify_all();
        }
    }

    std::uint64_t size_;
    Fill fill_;
    std::vector<int> state_;
    std::atomic<std::size_t> next_{0};
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::condition_variable ready_;
    std::vector<std::thread> threads_;
};

// pread()s [offset, offset + want) of `fd` into `data` at the same offset, asking for `length`
// (O_DIRECT's aligned length): 0, or an errno (EIO for a file shorter than its size said).
int pread_chunk(int fd, char* data, std::uint64_t offset, std::uint64_t length, std::uint64_t want) {
    std::uint64_t got = 0;
    while (got < want) {
        const ssize_t n = ::pread(fd, data + offset + got, length - got, static_cast<off_t>(offset + got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno;
        if (n == 0) return EIO;
        got += static_cast<std::uint64_t>(n);
    }
    return 0;
}

// Fresh memory's pages are allocated on first touch, one fault each: here ahead of the reads,
// while they wait for the disk (a read reaching pages not yet there faults them itself).
// Kernels before 5.14 have no MADV_POPULATE_WRITE: the reads fault them, as without this.
void populate_ahead(const ChunkReads& reads, char* data, std::uint64_t size) {
    for (std::uint64_t offset = 0; !reads.stopping() && offset < size; offset += kChunk) {
        const std::uint64_t length = round_up(std::min<std::uint64_t>(kChunk, size - offset));
        if (::madvise(data + offset, length, MADV_POPULATE_WRITE) != 0) return;
    }
}

// Hands every chunk of `reads` to `consume` in order: 0, or the errno of the read that failed.
int consume_in_order(ChunkReads& reads, const char* data, std::uint64_t size,
                     const std::function<void(const char*, std::size_t)>& consume) {
    for (std::size_t k = 0; k < reads.chunks(); ++k) {
        if (const int error = reads.wait(k); error != 0) return error;
        const std::uint64_t offset = k * kChunk;
        consume(data + offset, static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, size - offset)));
    }
    return 0;
}

}  // namespace

FileImage::~FileImage() { reset(); }

FileImage::FileImage(FileImage&& other) noexcept : data_(other.data_), size_(other.size_), how_(other.how_) {
    other.data_ = nullptr;
    other.size_ = 0;
}

FileImage& FileImage::operator=(FileImage&& other) noexcept {
    if (this != &other) {
        reset();
        data_ = other.data_, size_ = other.size_, how_ = other.how_;
        other.data_ = nullptr;
        other.size_ = 0;
    }
    return *this;
}

void FileImage::reset() noexcept {
    if (how_ == How::mapped && data_ != nullptr) ::munmap(data_, size_);
    if (how_ != How::mapped) std::free(data_);
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
    if (!direct) ::posix_fadvise(raw, 0, 0, POSIX_FADV_SEQUENTIAL);
    return Fd(raw);
}

std::uint64_t size_of(int fd, const std::string& path) {
    struct stat info {};
    if (::fstat(fd, &info) != 0)
        throw StorageError(fmt::format("storage: cannot stat {}: {}", path, std::strerror(errno)));
    return static_cast<std::uint64_t>(info.st_size);
}

// The file mapped and its pages read in (MADV_POPULATE_READ, kernel 5.14+: the disk fills the
// page cache and nothing is copied), chunks consumed as they arrive: the mapping, or null where
// the filesystem cannot map the file or a chunk's read fails (the buffered path then reads it
// and names the error). No page is touched before its read succeeded, so a read error is an
// errno here, never a SIGBUS.
char* map_pass(int fd, std::uint64_t size, const std::function<void()>& restart,
               const std::function<void(const char*, std::size_t)>& consume) {
    void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED) return nullptr;
    char* data = static_cast<char*>(mapped);
    ::madvise(data, size, MADV_SEQUENTIAL);
    int error = 0;
    {
        ChunkReads reads(size, [data](std::uint64_t offset, std::uint64_t want) {
            return ::madvise(data + offset, round_up(want), MADV_POPULATE_READ) == 0 ? 0 : errno;
        });
        reads.start();
        restart();
        error = consume_in_order(reads, data, size, consume);
    }
    if (error == 0) return data;
    ::munmap(data, size);
    return nullptr;
}

// The buffered image: aligned memory, read with O_DIRECT unless `buffered`: 0, or the errno of
// the read that failed.
int read_pass(int fd, char* data, std::uint64_t size, const std::function<void(const char*, std::size_t)>& consume) {
    ChunkReads reads(size, [fd, data, size](std::uint64_t offset, std::uint64_t want) {
        return pread_chunk(fd, data, offset, round_up(want), want);
    });
    reads.start([&reads, data, size] { populate_ahead(reads, data, size); });
    return consume_in_order(reads, data, size, consume);
}

}  // namespace

FileImage read_file_image(const std::string& path, const std::function<void()>& restart,
                          const std::function<void(const char*, std::size_t)>& consume) {
    FileImage image;
    image.how_ = FileImage::How::mapped;
    {
        Fd fd = open_or_throw(path, O_RDONLY | O_CLOEXEC);
        image.size_ = size_of(fd.get(), path);
        if (image.size_ == 0) return image;
        image.data_ = map_pass(fd.get(), image.size_, restart, consume);
        if (image.data_ != nullptr) return image;
    }
    for (bool buffered : {false, true}) {
        bool direct = false;
        Fd fd = open_for_image(path, buffered, direct);
        image.reset();
        image.how_ = direct ? FileImage::How::direct : FileImage::How::buffered;
        image.size_ = size_of(fd.get(), path);
        if (image.size_ == 0) return image;
        if (::posix_memalign(reinterpret_cast<void**>(&image.data_), kAlign, round_up(image.size_)) != 0) {
            image.data_ = nullptr;
            throw StorageError(fmt::format("storage: no memory to read {} ({} bytes)", path, image.size_));
        }
        restart();
        const int error = read_pass(fd.get(), image.data_, image.size_, consume);
        if (error == 0) return image;
        // A filesystem that opens with O_DIRECT but refuses its reads: read it as any file.
        if (!(error == EINVAL && direct))
            throw StorageError(fmt::format("storage: reading {} failed: {}", path, std::strerror(error)));
    }
    throw StorageError(fmt::format("storage: reading {} failed", path));
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
