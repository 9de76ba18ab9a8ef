#pragma once
// The byte level under the PMI-1 server: an owned file descriptor, a socketpair, and a line reader
// that never blocks by itself (the server polls first, so it can also wait for a stop request).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace trainrt::launch::pmi1 {

// Move-only owner of a file descriptor; closes it on destruction.
class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) noexcept : fd_(fd) {}
    UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept;
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { reset(); }

    int get() const noexcept { return fd_; }
    explicit operator bool() const noexcept { return fd_ >= 0; }
    int release() noexcept { return std::exchange(fd_, -1); }
    void reset() noexcept;

private:
    int fd_ = -1;
};

// A connected AF_UNIX stream pair, both ends close-on-exec. Throws LaunchError.
std::pair<UniqueFd, UniqueFd> make_socketpair();

// Writes all of `data`; EPIPE does not raise SIGPIPE. Throws LaunchError.
void write_all(int fd, std::string_view data);

// Splits a byte stream into '\n'-terminated lines (returned without the '\n').
class LineReader {
public:
    static constexpr std::size_t max_line = 64 * 1024;

    explicit LineReader(int fd) : fd_(fd) {}
    // A complete line already received, if any. Throws LaunchError past max_line.
    std::optional<std::string> take_line();
    // One read(2) into the buffer; false on end of file. Throws LaunchError on errors.
    bool fill();

private:
    int fd_;
    std::string buffer_;
};

}  // namespace trainrt::launch::pmi1
