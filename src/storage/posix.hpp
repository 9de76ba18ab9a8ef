#pragma once
// Lustre-compatible POSIX helpers: atomic replace by rename, fsync of files and directories,
// append-only line files. No flock anywhere. Failures are StorageErrors with strerror text.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace trainrt::storage {

// Move-only owner of a file descriptor; closes it on destruction, never throws.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd();
    Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    Fd& operator=(Fd&& other) noexcept;
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }

private:
    int fd_ = -1;
};

Fd open_or_throw(const std::string& path, int flags, int mode = 0644);
void write_all(int fd, const void* data, std::size_t bytes, const std::string& path);
// All `length` bytes at file offset `offset` (pwrite(2), EINTR retried): 0, or the errno of the
// failure. For threads that record a failure instead of throwing it (DirectWriter's writers).
int pwrite_all(int fd, const void* data, std::uint64_t length, std::uint64_t offset) noexcept;
void fsync_path(const std::string& path);
// Starts the disk write of the dirty pages in [offset, offset + length) of the open file `fd`
// and returns without waiting (sync_file_range WRITE): the disk works on these bytes while the
// caller copies the next ones, so the final fsync finds little left to do. Durability still
// comes from that fsync only. A filesystem without it (EINVAL, ENOSYS) is no error.
void start_writeback(int fd, std::uint64_t offset, std::uint64_t length, const std::string& path);
// Gathers the bytes written to `fd` and starts their disk write (start_writeback) once at least
// `window_bytes` lie back to back: a file of many small blocks costs one sync_file_range per
// window, not one per block. A write that does not continue the window starts the window's
// bytes first. What is still gathered at the end is left to the file's fsync.
class WritebackWindow {
public:
    // What starts the disk write of [offset, offset + length): start_writeback of the file.
    using Start = std::function<void(std::uint64_t offset, std::uint64_t length)>;
    WritebackWindow(int fd, const std::string& path, std::uint64_t window_bytes)
        : WritebackWindow([fd, path](std::uint64_t offset, std::uint64_t length) { start_writeback(fd, offset, length, path); },
                          window_bytes) {}
    WritebackWindow(Start start, std::uint64_t window_bytes) : start_(std::move(start)), window_bytes_(window_bytes) {}
    void wrote(std::uint64_t offset, std::uint64_t length);

private:
    void start();
    Start start_;
    std::uint64_t window_bytes_;
    std::uint64_t begin_ = 0, end_ = 0;  // the gathered bytes
};
// Whether the open file `fd` lives on a filesystem that keeps files in memory (tmpfs, ramfs);
// false when fstatfs fails.
bool on_memory_filesystem(int fd);
void fsync_parent_dir(const std::string& path);
void make_dirs(const std::string& path);  // mkdir -p; StorageError says why it cannot
bool path_exists(const std::string& path);

// Writes `content` to `path` atomically: temporary file in the same directory, fsync, rename,
// fsync of the directory. Readers see the old file or the new one, never a mix.
void write_file_atomic(const std::string& path, const std::string& content);

// Renames `from` to `to` and makes the rename durable.
void rename_durable(const std::string& from, const std::string& to);

// Appends one line (a '\n' is added) with a single write(2) on an O_APPEND descriptor.
void append_line(const std::string& path, const std::string& line);

// append_line for a file appended to often (a row per report): the descriptor stays open
// between lines. Whoever replaces the file (rename over it) calls reopen() before appending.
class LineAppender {
public:
    explicit LineAppender(std::string path) : path_(std::move(path)) {}
    void append(const std::string& line);
    void reopen() { fd_ = Fd(); }
    const std::string& path() const { return path_; }

private:
    std::string path_;
    Fd fd_;
};

}  // namespace trainrt::storage
