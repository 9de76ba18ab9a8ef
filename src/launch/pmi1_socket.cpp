#include "launch/pmi1_socket.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::launch::pmi1 {
namespace {

[[noreturn]] void throw_errno(const char* call) {
    throw LaunchError(fmt::format("launch: PMI-1 socket: {} failed: {}", call,
                                  std::strerror(errno)));
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
        reset();
        fd_ = other.release();
    }
    return *this;
}

void UniqueFd::reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

std::pair<UniqueFd, UniqueFd> make_socketpair() {
    int fds[2] = {-1, -1};
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throw_errno("socketpair");
    return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

void write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t sent = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) continue;
        if (sent < 0) throw_errno("send");
        data.remove_prefix(static_cast<std::size_t>(sent));
    }
}

std::optional<std::string> LineReader::take_line() {
    auto end = buffer_.find('\n');
    if (end == std::string::npos) {
        if (buffer_.size() > max_line)
            throw LaunchError(fmt::format("launch: PMI-1 socket: a line longer than {} bytes "
                                          "arrived; the peer does not speak PMI-1", max_line));
        return std::nullopt;
    }
    std::string line = buffer_.substr(0, end);
    buffer_.erase(0, end + 1);
    return line;
}

bool LineReader::fill() {
    char chunk[4096];
    for (;;) {
        ssize_t got = ::read(fd_, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) throw_errno("read");
        buffer_.append(chunk, static_cast<std::size_t>(got));
        return got > 0;
    }
}

}  // namespace trainrt::launch::pmi1
