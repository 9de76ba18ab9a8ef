#include "launch/tcp.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::launch::tcp {
namespace {

[[noreturn]] void throw_errno(const char* call) {
    throw LaunchError(fmt::format("launch: TCP: {} failed: {}", call, std::strerror(errno)));
}

// A dotted address as it is, a name (Slurm's NodeAddr may be one) through the resolver.
bool resolve_ipv4(const std::string& address, std::uint16_t port, sockaddr_in& out) {
    std::memset(&out, 0, sizeof out);
    out.sin_family = AF_INET;
    out.sin_port = htons(port);
    if (::inet_pton(AF_INET, address.c_str(), &out.sin_addr) == 1) return true;
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(address.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) return false;
    out.sin_addr = reinterpret_cast<const sockaddr_in*>(found->ai_addr)->sin_addr;
    ::freeaddrinfo(found);
    return true;
}

// Completes a non-blocking connect: the socket's pending error once writable, or a timeout.
std::string finish_connect(int fd, double timeout_s) {
    pollfd waiting{fd, POLLOUT, 0};
    int ready = -1;
    do {
        ready = ::poll(&waiting, 1, static_cast<int>(std::ceil(timeout_s * 1000)));
    } while (ready < 0 && errno == EINTR);
    if (ready == 0) return fmt::format("timed out after {:g} s", timeout_s);
    if (ready < 0) return std::strerror(errno);
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) return std::strerror(errno);
    return error == 0 ? "" : std::strerror(error);
}

}  // namespace

std::vector<std::string> local_addresses() {
    ifaddrs* list = nullptr;
    std::vector<std::string> found, loopback;
    if (::getifaddrs(&list) != 0) return {"127.0.0.1"};
    for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
        if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET || !(entry->ifa_flags & IFF_UP))
            continue;
        char text[INET_ADDRSTRLEN] = {};
        const auto* address = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
        if (::inet_ntop(AF_INET, &address->sin_addr, text, sizeof text) == nullptr) continue;
        ((entry->ifa_flags & IFF_LOOPBACK) ? loopback : found).emplace_back(text);
    }
    ::freeifaddrs(list);
    found.insert(found.end(), loopback.begin(), loopback.end());
    if (found.empty()) found.emplace_back("127.0.0.1");
    return found;
}

UniqueFd listen_any(std::uint16_t& port) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) throw_errno("socket");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) throw_errno("bind");
    if (::listen(fd.get(), 16) != 0) throw_errno("listen");
    socklen_t length = sizeof address;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) throw_errno("getsockname");
    port = ntohs(address.sin_port);
    return fd;
}

UniqueFd connect_to(const std::string& address, std::uint16_t port, double timeout_s, std::string* why) {
    auto failed = [why](std::string reason) {
        if (why != nullptr) *why = std::move(reason);
        return UniqueFd();
    };
    sockaddr_in target{};
    if (!resolve_ipv4(address, port, target)) return failed(fmt::format("no IPv4 address for '{}'", address));
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) return failed(std::strerror(errno));
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&target), sizeof target) != 0 && errno != EINPROGRESS)
        return failed(std::strerror(errno));
    if (std::string error = finish_connect(fd.get(), timeout_s); !error.empty()) return failed(std::move(error));
    const int on = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    return fd;
}

UniqueFd accept_waiting(int listener) noexcept {
    int fd = -1;
    do {
        fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    } while (fd < 0 && errno == EINTR);
    return UniqueFd(fd);
}

}  // namespace trainrt::launch::tcp
