// launch/tcp: connect with a timeout, a listener on every interface, this machine's addresses;
// and where a node's slurmd listens (what the supervisor connects to). Real sockets on loopback.
#include <catch2/catch.hpp>

#include <sys/socket.h>

#include <algorithm>
#include <string>

#include "launch/slurm_client.hpp"
#include "launch/tcp.hpp"

using namespace trainrt::launch;

TEST_CASE("tcp: a listener accepts a connection; a closed port refuses at once", "[tcp]") {
    std::uint16_t port = 0;
    tcp::UniqueFd listener = tcp::listen_any(port);
    REQUIRE(port != 0);
    CHECK(!tcp::accept_waiting(listener.get()));  // nothing waiting: does not block
    std::string why;
    tcp::UniqueFd client = tcp::connect_to("127.0.0.1", port, 2, &why);
    REQUIRE(client);
    CHECK(why.empty());
    tcp::UniqueFd served;
    for (int i = 0; i < 200 && !served; ++i) served = tcp::accept_waiting(listener.get());
    REQUIRE(served);
    CHECK(::send(client.get(), "x", 1, 0) == 1);

    listener.reset();  // the port is closed now: the kernel refuses
    CHECK(!tcp::connect_to("127.0.0.1", port, 2, &why));
    CHECK(why == "Connection refused");
}

TEST_CASE("tcp: names resolve, nonsense is a reason, not an exception", "[tcp]") {
    std::uint16_t port = 0;
    tcp::UniqueFd listener = tcp::listen_any(port);
    std::string why;
    CHECK(tcp::connect_to("localhost", port, 2, &why));
    CHECK(!tcp::connect_to("no-such-host.invalid", port, 2, &why));
    CHECK(why == "no IPv4 address for 'no-such-host.invalid'");
}

TEST_CASE("tcp: this machine's addresses end with loopback", "[tcp]") {
    auto addresses = tcp::local_addresses();
    REQUIRE(!addresses.empty());
    CHECK(addresses.back().rfind("127.", 0) == 0);
    CHECK(std::count_if(addresses.begin(), addresses.end(), [](const std::string& a) { return a.empty(); }) == 0);
}

TEST_CASE("slurm: where a node's slurmd listens, from scontrol", "[tcp]") {
    const std::string node = "NodeName=node2 Arch=x86_64 CoresPerSocket=1 NodeAddr=10.77.0.3 NodeHostName=node2 "
                             "Version=22.05.8 OS=Linux";
    auto daemon = parse_node_address(node, 6818);
    REQUIRE(daemon);
    CHECK(daemon->address == "10.77.0.3");
    CHECK(daemon->port == 6818);
    auto own_port = parse_node_address(node + " Port=17001", 6818);  // a node with its own port
    REQUIRE(own_port);
    CHECK(own_port->port == 17001);
    CHECK(!parse_node_address("Node node9 not found", 6818));
    CHECK(!parse_node_address(node, 0));  // no port known
    CHECK(parse_slurmd_port("SlurmctldPort           = 6817\nSlurmdPort              = 6818\n") == 6818);
    CHECK(parse_slurmd_port("nothing") == 0);
}
