#include "storage/direct_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "storage/mapped_file.hpp"
#include "storage/page_coherence.hpp"

#include "trainrt/error.hpp"

namespace trainrt::storage {
namespace {

constexpr std::uint64_t kBufferBytes = DirectWriter::kChunkBytes * DirectWriter::kChunks;

// The buffers of writers that ended, kept for the next one: fresh pages cost more to fill than
// the copy into hot ones (a virtual machine's host may take freed memory back). One is kept: 32 MiB
// per process.
class BufferPool {
public:
    PageBuffer take() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!kept_.empty()) {
                PageBuffer buffer = std::move(kept_.back());
                kept_.pop_back();
                return buffer;
            }
        }
        return allocate_page_buffer(kBufferBytes, "the buffers of O_DIRECT writes");
    }
    void give_back(PageBuffer buffer) noexcept {
        std::lock_guard<std::mutex> lock(mutex_);
        if (kept_.size() < kKept) kept_.push_back(std::move(buffer));
    }

private:
    static constexpr std::size_t kKept = 1;
    std::mutex mutex_;
    std::vector<PageBuffer> kept_;
};

BufferPool& pool() {
    static BufferPool* const instance = new BufferPool;  // never destroyed: writers may outlive statics
    return *instance;
}

std::uint64_t round_up(std::uint64_t value) {
    return (value + DirectWriter::kBlock - 1) / DirectWriter::kBlock * DirectWriter::kBlock;
}

// O_DIRECT for `path` where it pays and is safe: not on a memory filesystem, not on one that is
// not trusted coherent (direct_writer.hpp), and where the open is accepted.
Fd open_direct(const std::string& path, int buffered_fd) {
    if (on_memory_filesystem(buffered_fd) || !page_cache_coherent(buffered_fd)) return Fd();
    return Fd(::open(path.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC));
}

}  // namespace

DirectWriter::DirectWriter(const std::string& path)
    : path_(path), buffered_(open_or_throw(path, O_WRONLY)), direct_(open_direct(path, buffered_.get())) {
    if (!direct()) return;
    buffers_ = pool().take();
    for (int chunk = 0; chunk < kChunks; ++chunk) free_.push_back(chunk);
}

DirectWriter::~DirectWriter() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        closing_ = true;
    }
    changed_.notify_all();
    for (std::thread& thread : threads_) thread.join();
    if (buffers_.data() != nullptr) pool().give_back(std::move(buffers_));
}

char* DirectWriter::chunk_data(int chunk) const { return buffers_.data() + static_cast<std::uint64_t>(chunk) * kChunkBytes; }

void DirectWriter::write(std::uint64_t offset, const void* data, std::uint64_t length) {
    const char* bytes = static_cast<const char*>(data);
    if (length == 0) return;
    if (!direct()) {
        if (const int error = pwrite_all(buffered_.get(), bytes, length, offset))
            throw StorageError(fmt::format("storage: writing {} failed: {}", path_, std::strerror(error)));
        return;
    }
    throw_if_failed();
    if (open_ < 0 || offset != open_offset_ + filled_) {
        end_run();
        // The run's first partial block, through the page cache; the rest from a block boundary.
        const std::uint64_t head = std::min(round_up(offset) - offset, length);
        if (const int error = pwrite_all(buffered_.get(), bytes, head, offset))
            throw StorageError(fmt::format("storage: writing {} failed: {}", path_, std::strerror(error)));
        bytes += head, offset += head, length -= head;
        if (length == 0) return;
        open_ = take_free_chunk();
        open_offset_ = offset, filled_ = 0;
    }
    append(bytes, length);
}

void DirectWriter::append(const char* data, std::uint64_t length) {
    while (length > 0) {
        const std::uint64_t take = std::min(length, kChunkBytes - filled_);
        std::memcpy(chunk_data(open_) + filled_, data, static_cast<std::size_t>(take));
        filled_ += take, data += take, length -= take;
        if (filled_ == kChunkBytes) {
            submit(kChunkBytes);
            open_ = take_free_chunk();
            open_offset_ += kChunkBytes, filled_ = 0;
        }
    }
}

// The open run's whole blocks go out with O_DIRECT, its last partial block through the page cache.
void DirectWriter::end_run() {
    if (open_ < 0) return;
    const std::uint64_t whole = filled_ / kBlock * kBlock, tail = filled_ - whole;
    if (tail > 0) {
        if (const int error = pwrite_all(buffered_.get(), chunk_data(open_) + whole, tail, open_offset_ + whole))
            remember_failure(fmt::format("storage: writing {} failed: {}", path_, std::strerror(error)));
    }
    if (whole > 0) {
        submit(whole);
    } else {
        std::lock_guard<std::mutex> lock(mutex_);
        free_.push_back(open_);
    }
    open_ = -1;
    throw_if_failed();
}

void DirectWriter::submit(std::uint64_t length) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        jobs_.push_back(Job{open_, open_offset_, length});
        ++in_flight_;
        if (threads_.empty())
            for (int i = 0; i < kChunks - 1; ++i) threads_.emplace_back([this] { write_chunks(); });
    }
    changed_.notify_all();
}

int DirectWriter::take_free_chunk() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !free_.empty(); });
    const int chunk = free_.back();
    free_.pop_back();
    return chunk;
}

// A writer thread: takes chunks until the writer is destroyed. A chunk O_DIRECT refuses (EINVAL:
// an alignment this filesystem does not take) is written through the page cache instead.
void DirectWriter::write_chunks() {
    for (;;) {
        Job job{};
        {
            std::unique_lock<std::mutex> lock(mutex_);
            changed_.wait(lock, [&] { return closing_ || !jobs_.empty(); });
            if (jobs_.empty()) return;
            job = jobs_.front();
            jobs_.pop_front();
        }
        int error = pwrite_all(direct_.get(), chunk_data(job.chunk), job.length, job.offset);
        if (error == EINVAL) error = pwrite_all(buffered_.get(), chunk_data(job.chunk), job.length, job.offset);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (error != 0 && failure_.empty())
                failure_ = fmt::format("storage: writing {} failed: {}", path_, std::strerror(error));
            free_.push_back(job.chunk);
            --in_flight_;
        }
        changed_.notify_all();
    }
}

void DirectWriter::remember_failure(const std::string& message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_.empty()) failure_ = message;
}

void DirectWriter::throw_if_failed() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_.empty()) throw StorageError(failure_);
}

void DirectWriter::finish() {
    if (!direct()) return;
    end_run();
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return in_flight_ == 0; });
    if (!failure_.empty()) throw StorageError(failure_);
}

void copy_file_direct(const std::string& from, const std::string& to) {
    Fd source = open_or_throw(from, O_RDONLY);
    { Fd created = open_or_throw(to, O_WRONLY | O_CREAT | O_TRUNC); }
    DirectWriter writer(to);
    if (const std::optional<MappedFile> mapped = map_if_in_memory(source.get(), from)) {
        writer.write(0, mapped->data(), mapped->size());
        writer.finish();
        return;
    }
    std::vector<char> piece(DirectWriter::kChunkBytes);
    for (std::uint64_t at = 0;;) {
        const ssize_t got = ::pread(source.get(), piece.data(), piece.size(), static_cast<off_t>(at));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) throw StorageError(fmt::format("storage: reading {} failed: {}", from, std::strerror(errno)));
        if (got == 0) break;
        writer.write(at, piece.data(), static_cast<std::uint64_t>(got));
        at += static_cast<std::uint64_t>(got);
    }
    writer.finish();
}

}  // namespace trainrt::storage
