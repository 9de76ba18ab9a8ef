#pragma once
// Links between the first processes of the job's nodes, outside MPI: a node whose trainrt process
// is gone (killed, crashed, the node's processes lost) closes its links, and its neighbours know
// at once, where MPI may block in a collective until [failure] peer_timeout. A ring: node i's
// first process connects to node i+1's and is connected to by node i-1's. A process that ends
// says goodbye first ('B'; 'F' after recording its own failure), so only a link closed without
// one counts as a lost peer. A node that hangs, or loses power, closes nothing: the heartbeats
// (runlog/heartbeats.hpp) notice those.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launch/tcp.hpp"
#include "trainrt/comm.hpp"
#include "trainrt/context.hpp"

namespace trainrt::runtime {

// Where a node's first process listens, as published to the others.
struct PeerAddress {
    int node_rank = 0;
    std::string host;
    std::uint16_t port = 0;
    std::vector<std::string> addresses;  // tried in order

    std::string to_text() const;  // "node_rank\thost\tport\taddr,addr"
    static std::optional<PeerAddress> from_text(const std::string& text);
};

class PeerLinks {
public:
    // Listens on every interface. LaunchError when it cannot.
    explicit PeerLinks(std::string own_host, int own_node_rank);
    ~PeerLinks();  // goodbye on every link
    PeerLinks(const PeerLinks&) = delete;
    PeerLinks& operator=(const PeerLinks&) = delete;

    const PeerAddress& own() const { return own_; }
    // Connects to the next node's process in `ring` (one per node, by node rank). "" when done,
    // else why not (the ring then has a gap there: the heartbeats cover it).
    std::string join(const std::vector<PeerAddress>& ring, double timeout_s);
    // Waits up to `timeout_s` for news (or wake()); the hosts whose link closed without a goodbye.
    std::vector<std::string> wait(double timeout_s);
    void wake() noexcept;  // from another thread: the current or next wait() returns at once
    // 'B' (ending) or 'F' (ending after recording a failure) on every link. Never throws.
    void say(char word) noexcept;

private:
    struct Link {
        launch::tcp::UniqueFd fd;
        std::string host;  // "" until its hello arrived
        std::string hello;
        bool goodbye = false;
    };
    void accept_all() noexcept;
    bool read_from(Link& link);  // false when the link closed

    PeerAddress own_;
    launch::tcp::UniqueFd listener_;
    launch::tcp::UniqueFd wake_;  // eventfd
    std::vector<Link> links_;
    bool said_ = false;
};

// Collective over `world`: every process takes part; the first process of each node gets its
// links (nullptr elsewhere, on a single node, or when it cannot listen). A link that cannot be
// made is one warning: the ring has a gap there, the heartbeats cover it.
std::unique_ptr<PeerLinks> open_peer_links(Communicator& world, const Context& context);

}  // namespace trainrt::runtime
