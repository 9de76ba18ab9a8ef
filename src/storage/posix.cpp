#include "storage/posix.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::storage {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int error) {
    throw StorageError(fmt::format("storage: {} {} failed: {}", what, path, std::strerror(error)));
}

std::string parent_of(const std::string& path) {
    std::string parent = std::filesystem::path(path).parent_path().string();
    return parent.empty() ? "." : parent;
}

}  // namespace

bool on_memory_filesystem(int fd) {
    struct statfs filesystem {};
    if (::fstatfs(fd, &filesystem) != 0) return false;
    const auto kind = static_cast<unsigned long>(filesystem.f_type);
    return kind == TMPFS_MAGIC || kind == RAMFS_MAGIC;
}

Fd::~Fd() {
    if (fd_ >= 0) ::close(fd_);
}

Fd& Fd::operator=(Fd&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = other.fd_;
        other.fd_ = -1;
    }
    return *this;
}

Fd open_or_throw(const std::string& path, int flags, int mode) {
    int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    if (fd < 0) fail("open", path, errno);
    return Fd(fd);
}

namespace {

// Calls `write_some(data, length, done)` (a write(2) or pwrite(2) of the rest) until all `length`
// bytes are written: 0, or the errno of the failure (EIO for a write that wrote nothing).
template <class WriteSome>
int write_fully(const char* data, std::uint64_t length, WriteSome write_some) {
    for (std::uint64_t done = 0; done < length;) {
        const ssize_t written = write_some(data + done, length - done, done);
        if (written < 0 && errno == EINTR) continue;
        if (written < 0) return errno;
        if (written == 0) return EIO;
        done += static_cast<std::uint64_t>(written);
    }
    return 0;
}

}  // namespace

void write_all(int fd, const void* data, std::size_t bytes, const std::string& path) {
    const int error = write_fully(static_cast<const char*>(data), bytes, [fd](const char* from, std::uint64_t left, std::uint64_t) {
        return ::write(fd, from, static_cast<std::size_t>(left));
    });
    if (error != 0) fail("write to", path, error);
}

int pwrite_all(int fd, const void* data, std::uint64_t length, std::uint64_t offset) noexcept {
    return write_fully(static_cast<const char*>(data), length, [fd, offset](const char* from, std::uint64_t left, std::uint64_t done) {
        return ::pwrite(fd, from, static_cast<std::size_t>(left), static_cast<off_t>(offset + done));
    });
}

void fsync_path(const std::string& path) {
    Fd fd = open_or_throw(path, O_RDONLY);
    if (::fsync(fd.get()) != 0) fail("fsync of", path, errno);
}

void start_writeback(int fd, std::uint64_t offset, std::uint64_t length, const std::string& path) {
    if (::sync_file_range(fd, static_cast<off64_t>(offset), static_cast<off64_t>(length),
                          SYNC_FILE_RANGE_WRITE) == 0)
        return;
    if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) fail("writeback of", path, errno);
}

void WritebackWindow::wrote(std::uint64_t offset, std::uint64_t length) {
    if (offset != end_) {
        start();
        begin_ = end_ = offset;
    }
    end_ += length;
    if (end_ - begin_ >= window_bytes_) start();
}

void WritebackWindow::start() {
    if (end_ > begin_) start_(begin_, end_ - begin_);
    begin_ = end_;
}

void fsync_parent_dir(const std::string& path) { fsync_path(parent_of(path)); }

void make_dirs(const std::string& path) {
    std::error_code error;
    std::filesystem::create_directories(path, error);
    if (error)
        throw StorageError(fmt::format("storage: cannot create directory {}: {}", path,
                                       error.message()));
}

bool path_exists(const std::string& path) {
    struct stat info{};
    return ::stat(path.c_str(), &info) == 0;
}

void rename_durable(const std::string& from, const std::string& to) {
    if (::rename(from.c_str(), to.c_str()) != 0) fail("rename to " + to + " of", from, errno);
    fsync_parent_dir(to);
}

void write_file_atomic(const std::string& path, const std::string& content) {
    std::string temporary = fmt::format("{}.tmp.{}", path, ::getpid());
    {
        Fd fd = open_or_throw(temporary, O_WRONLY | O_CREAT | O_TRUNC);
        write_all(fd.get(), content.data(), content.size(), temporary);
        if (::fsync(fd.get()) != 0) fail("fsync of", temporary, errno);
    }
    rename_durable(temporary, path);
}

void append_line(const std::string& path, const std::string& line) {
    Fd fd = open_or_throw(path, O_WRONLY | O_CREAT | O_APPEND);
    std::string record = line + "\n";
    write_all(fd.get(), record.data(), record.size(), path);
}

void LineAppender::append(const std::string& line) {
    if (fd_.get() < 0) fd_ = open_or_throw(path_, O_WRONLY | O_CREAT | O_APPEND);
    std::string record = line + "\n";
    write_all(fd_.get(), record.data(), record.size(), path_);
}

}  // namespace trainrt::storage
