#pragma once
// TCP between the nodes of a job, outside MPI: the runtime's peer links (runtime/peer_links.hpp)
// and the supervisor's check that a node's Slurm daemon still answers. IPv4 only, as Slurm's
// NodeAddr and the interfaces a job's nodes share are.
#include <cstdint>
#include <string>
#include <vector>

#include "launch/pmi1_socket.hpp"

namespace trainrt::launch::tcp {

using pmi1::UniqueFd;

// This machine's IPv4 addresses on interfaces that are up, loopback last (a peer tries them in
// order: a node with several networks is reached on whichever the peer shares with it).
std::vector<std::string> local_addresses();

// A listening socket on every interface, on a port the kernel picks (returned in `port`).
// Throws LaunchError.
UniqueFd listen_any(std::uint16_t& port);

// Connects to address:port (dotted, or a name to resolve) within `timeout_s`. An invalid fd when it cannot, with the reason in
// `why` ("connection refused", "timed out after 1 s", ...). Never throws.
UniqueFd connect_to(const std::string& address, std::uint16_t port, double timeout_s, std::string* why);

// A connection that `listener` has waiting, without blocking; an invalid fd when none.
UniqueFd accept_waiting(int listener) noexcept;

}  // namespace trainrt::launch::tcp
