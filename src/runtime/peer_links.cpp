#include "runtime/peer_links.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "log/log.hpp"
#include "trainrt/error.hpp"

namespace trainrt::runtime {
namespace {

constexpr const char* kHello = "trainrt-link ";
constexpr std::size_t kPublishedBytes = 512;  // per rank in the allgather
constexpr double kConnectTimeoutS = 5;

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    std::istringstream stream(text);
    for (std::string part; std::getline(stream, part, separator);) parts.push_back(part);
    return parts;
}

}  // namespace

std::string PeerAddress::to_text() const {
    std::string text = fmt::format("{}\t{}\t{}\t", node_rank, host, port);
    for (const std::string& address : addresses) {
        if (text.size() + address.size() + 1 >= kPublishedBytes) break;  // the first ones fit
        text += address + ",";
    }
    return text;
}

std::optional<PeerAddress> PeerAddress::from_text(const std::string& text) {
    auto fields = split(text, '\t');
    if (fields.size() != 4) return std::nullopt;
    PeerAddress peer;
    try {
        peer.node_rank = std::stoi(fields[0]);
        const int port = std::stoi(fields[2]);
        if (port <= 0 || port > 65535) return std::nullopt;
        peer.port = static_cast<std::uint16_t>(port);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    peer.host = fields[1];
    for (std::string& address : split(fields[3], ','))
        if (!address.empty()) peer.addresses.push_back(std::move(address));
    return peer;
}

PeerLinks::PeerLinks(std::string own_host, int own_node_rank)
    : wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (!wake_) throw LaunchError(fmt::format("peer links: eventfd failed: {}", std::strerror(errno)));
    own_.node_rank = own_node_rank;
    own_.host = std::move(own_host);
    listener_ = launch::tcp::listen_any(own_.port);
    own_.addresses = launch::tcp::local_addresses();
}

PeerLinks::~PeerLinks() { say('B'); }

std::string PeerLinks::join(const std::vector<PeerAddress>& ring, double timeout_s) {
    if (ring.size() < 2) return "";
    const PeerAddress& next = ring[static_cast<std::size_t>(own_.node_rank + 1) % ring.size()];
    std::vector<std::string> tried;
    for (const std::string& address : next.addresses) {
        std::string why;
        launch::tcp::UniqueFd fd = launch::tcp::connect_to(address, next.port, timeout_s, &why);
        if (!fd) {
            tried.push_back(fmt::format("{}: {}", address, why));
            continue;
        }
        const std::string hello = kHello + own_.host + "\n";
        if (::send(fd.get(), hello.data(), hello.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(hello.size())) {
            tried.push_back(fmt::format("{}: send failed: {}", address, std::strerror(errno)));
            continue;
        }
        links_.push_back(Link{std::move(fd), next.host, "", false});
        return "";
    }
    return fmt::format("cannot reach {}'s trainrt on port {} ({})", next.host, next.port, fmt::join(tried, "; "));
}

std::vector<std::string> PeerLinks::wait(double timeout_s) {
    std::vector<pollfd> watched = {{wake_.get(), POLLIN, 0}, {listener_.get(), POLLIN, 0}};
    for (const Link& link : links_) watched.push_back({link.fd.get(), POLLIN, 0});
    int ready = ::poll(watched.data(), watched.size(), static_cast<int>(std::ceil(timeout_s * 1000)));
    if (ready <= 0) return {};  // EINTR: the caller waits again
    if (watched[0].revents != 0) {
        std::uint64_t count = 0;
        [[maybe_unused]] auto drained = ::read(wake_.get(), &count, sizeof count);
    }
    std::vector<std::string> lost;
    std::vector<Link> open;
    for (std::size_t i = 0; i < links_.size(); ++i) {
        Link& link = links_[i];
        const bool alive = watched[i + 2].revents == 0 || read_from(link);
        if (alive) {
            open.push_back(std::move(link));
        } else if (!link.host.empty() && !link.goodbye &&
                   std::find(lost.begin(), lost.end(), link.host) == lost.end()) {
            lost.push_back(link.host);
        }
    }
    links_ = std::move(open);
    if (watched[1].revents != 0) accept_all();
    return lost;
}

// A hello ("trainrt-link HOST\n") first; then single bytes: 'B' and 'F' are goodbyes. Anything
// else before a hello (not one of ours) closes the link, which then counts for nobody.
bool PeerLinks::read_from(Link& link) {
    std::array<char, 256> bytes{};
    ssize_t got = -1;
    do {
        got = ::recv(link.fd.get(), bytes.data(), bytes.size(), 0);
    } while (got < 0 && errno == EINTR);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (got <= 0) return false;
    for (ssize_t i = 0; i < got; ++i) {
        const char byte = bytes[static_cast<std::size_t>(i)];
        if (!link.host.empty()) {
            link.goodbye = link.goodbye || byte == 'B' || byte == 'F';
        } else if (byte != '\n') {
            link.hello += byte;
            if (link.hello.size() > 300) return false;
        } else if (link.hello.rfind(kHello, 0) == 0 && link.hello.size() > std::strlen(kHello)) {
            link.host = link.hello.substr(std::strlen(kHello));
        } else {
            return false;
        }
    }
    return true;
}

void PeerLinks::accept_all() noexcept {
    for (;;) {
        launch::tcp::UniqueFd fd = launch::tcp::accept_waiting(listener_.get());
        if (!fd) return;
        links_.push_back(Link{std::move(fd), "", "", false});
    }
}

void PeerLinks::wake() noexcept {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto written = ::write(wake_.get(), &one, sizeof one);
}

// Connections not accepted yet get it too: closed unaccepted, they would read as a lost peer.
void PeerLinks::say(char word) noexcept {
    if (said_) return;
    said_ = true;
    accept_all();
    for (const Link& link : links_) ::send(link.fd.get(), &word, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

namespace {

// Every rank's published text (empty for all but each node's first process), in rank order.
std::vector<std::string> publish_all(Communicator& world, const std::string& mine) {
    std::vector<char> send(kPublishedBytes, '\0');
    std::copy_n(mine.begin(), std::min(mine.size(), kPublishedBytes - 1), send.begin());
    std::vector<char> all(kPublishedBytes * static_cast<std::size_t>(world.size()), '\0');
    world.allgather(send.data(), all.data(), kPublishedBytes);
    std::vector<std::string> texts;
    for (int rank = 0; rank < world.size(); ++rank)
        texts.emplace_back(all.data() + static_cast<std::size_t>(rank) * kPublishedBytes);
    return texts;
}

}  // namespace

std::unique_ptr<PeerLinks> open_peer_links(Communicator& world, const Context& context) {
    if (context.num_nodes < 2) return nullptr;
    std::unique_ptr<PeerLinks> links;
    std::string problem;
    if (context.local_rank == 0) {
        try {
            links = std::make_unique<PeerLinks>(context.hostname, context.node_rank);
        } catch (const Error& error) {
            problem = error.what();
        }
    }
    std::vector<PeerAddress> ring(static_cast<std::size_t>(context.num_nodes));
    std::vector<bool> known(ring.size(), false);
    for (const std::string& text : publish_all(world, links ? links->own().to_text() : ""))
        if (auto peer = PeerAddress::from_text(text);
            peer && peer->node_rank >= 0 && peer->node_rank < context.num_nodes) {
            known[static_cast<std::size_t>(peer->node_rank)] = true;
            ring[static_cast<std::size_t>(peer->node_rank)] = std::move(*peer);
        }
    const auto next = static_cast<std::size_t>(context.node_rank + 1) % ring.size();
    if (links && !known[next]) problem = fmt::format("node {} published no address", context.hostnames[next]);
    if (links && problem.empty()) problem = links->join(ring, kConnectTimeoutS);
    if (!problem.empty())
        log::warn("peer links: {}: a lost node there is noticed by its silent heartbeat only ([failure] "
                  "peer_timeout)", problem);
    return links;  // with a gap in the ring, its other links still count
}

}  // namespace trainrt::runtime
