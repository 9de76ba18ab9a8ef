// runtime/peer_links: the ring of links between nodes' first processes, on loopback. The other
// node is a forked process, so that it can die as a killed node's process does (SIGKILL: the
// kernel closes its sockets, no goodbye).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "launch/tcp.hpp"
#include "runtime/peer_links.hpp"

using namespace trainrt;
using runtime::PeerAddress;
using runtime::PeerLinks;

namespace {

std::string read_line(int fd) {
    std::string line;
    char c = 0;
    while (::read(fd, &c, 1) == 1 && c != '\n') line += c;
    return line;
}

void write_line(int fd, const std::string& text) {
    const std::string line = text + "\n";
    REQUIRE(::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
}

// Node 0 here, node 1 in a child that joins the ring, waits on its links for `live_s`, then
// ends as `end` says. Returns what node 0's waits reported lost within `watch_s`.
std::vector<std::string> ring_of_two(const std::function<void(PeerLinks&)>& end, double live_s, double watch_s) {
    int to_child[2], to_parent[2];
    REQUIRE(::pipe(to_child) == 0);
    REQUIRE(::pipe(to_parent) == 0);
    PeerLinks mine("hostA", 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        PeerLinks theirs("hostB", 1);
        write_line(to_parent[1], theirs.own().to_text());
        auto a = PeerAddress::from_text(read_line(to_child[0]));
        if (!a || !theirs.join({*a, theirs.own()}, 5).empty()) ::_exit(3);
        read_line(to_child[0]);  // node 0 joined too
        for (auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(live_s);
             std::chrono::steady_clock::now() < until;)
            theirs.wait(0.05);
        end(theirs);
        ::_exit(0);  // no destructor: only what `end` said was said
    }
    write_line(to_child[1], mine.own().to_text());
    auto b = PeerAddress::from_text(read_line(to_parent[0]));
    REQUIRE(b);
    CHECK(mine.join({mine.own(), *b}, 5).empty());
    write_line(to_child[1], "joined");
    std::vector<std::string> lost;
    for (auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(watch_s);
         std::chrono::steady_clock::now() < until && lost.empty();)
        lost = mine.wait(0.05);
    int status = 0;
    ::waitpid(child, &status, 0);
    for (int fd : {to_child[0], to_child[1], to_parent[0], to_parent[1]}) ::close(fd);
    return lost;
}

}  // namespace

TEST_CASE("peer links: a published address reads back; a malformed one is refused", "[peer_links]") {
    PeerAddress a{3, "node4", 40123, {"10.0.0.4", "127.0.0.1"}};
    auto back = PeerAddress::from_text(a.to_text());
    REQUIRE(back);
    CHECK(back->node_rank == 3);
    CHECK(back->host == "node4");
    CHECK(back->port == 40123);
    CHECK(back->addresses == a.addresses);
    CHECK(!PeerAddress::from_text(""));
    CHECK(!PeerAddress::from_text("1\tnode2\t99999\t10.0.0.1,"));
    CHECK(!PeerAddress::from_text("x\tnode2\t80\t10.0.0.1,"));
}

TEST_CASE("peer links: a process killed without a goodbye is a lost peer, at once", "[peer_links]") {
    auto lost = ring_of_two([](PeerLinks&) { ::raise(SIGKILL); }, 0.3, 10);
    CHECK(lost == std::vector<std::string>{"hostB"});
}

TEST_CASE("peer links: an end with a goodbye is no loss: 'B' (done) and 'F' (its own failure recorded)",
          "[peer_links]") {
    for (char word : {'B', 'F'}) {
        auto lost = ring_of_two([word](PeerLinks& links) { links.say(word); }, 0.3, 1.5);
        CHECK(lost.empty());
    }
}

TEST_CASE("peer links: a goodbye reaches a peer whose connection was not accepted yet", "[peer_links]") {
    // Neither side accepted the other's connection yet when the child says goodbye.
    auto lost = ring_of_two([](PeerLinks& links) { links.say('B'); }, 0, 1.5);
    CHECK(lost.empty());
}

TEST_CASE("peer links: a stranger on the port counts for nobody", "[peer_links]") {
    PeerLinks links("hostA", 0);
    {
        std::string why;
        auto stranger = launch::tcp::connect_to("127.0.0.1", links.own().port, 2, &why);
        REQUIRE(stranger);
        REQUIRE(::send(stranger.get(), "GET / HTTP/1.0\n", 15, 0) == 15);
        links.wait(0.2);
    }  // closed
    std::vector<std::string> lost;
    for (int i = 0; i < 10 && lost.empty(); ++i) lost = links.wait(0.05);
    CHECK(lost.empty());
}

TEST_CASE("peer links: wake() ends a wait at once", "[peer_links]") {
    PeerLinks links("hostA", 0);
    links.wake();
    const auto before = std::chrono::steady_clock::now();
    CHECK(links.wait(30).empty());
    CHECK(std::chrono::steady_clock::now() - before < std::chrono::seconds(10));
}
