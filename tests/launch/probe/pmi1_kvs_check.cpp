#include "pmi1_kvs_check.hpp"

#include <chrono>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "launch/pmi1_socket.hpp"
#include "launch/pmi1_wire.hpp"
#include "trainrt/error.hpp"

namespace {

using trainrt::launch::pmi1::LineReader;
using trainrt::launch::pmi1::Message;

class Pmi1Client {
public:
    explicit Pmi1Client(int fd) : fd_(fd), reader_(fd) {}

    Message ask(const std::string& line) {
        trainrt::launch::pmi1::write_all(fd_, line + "\n");
        for (;;) {
            if (auto reply = reader_.take_line()) return trainrt::launch::pmi1::parse_line(*reply);
            if (!reader_.fill()) throw trainrt::LaunchError("PMI-1 server closed the connection");
        }
    }

private:
    int fd_;
    LineReader reader_;
};

int pmi_fd() {
    const char* fd = std::getenv("PMI_FD");
    if (fd == nullptr) throw trainrt::LaunchError("--pmi1-kvs needs PMI_FD (a PMI-1 launcher)");
    return std::atoi(fd);
}

double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

// Puts one key per rank, fences, reads every rank's; returns the slowest get in ms.
double exchange_round(Pmi1Client& pmi, const std::string& kvs, int round, int rank, int size) {
    auto key = [&](int owner) { return fmt::format("probe.r{}.{}", round, owner); };
    auto value = [&](int owner) { return fmt::format("v{}.{}", round, owner); };
    pmi.ask(fmt::format("cmd=put kvsname={} key={} value={}", kvs, key(rank), value(rank)));
    if (pmi.ask("cmd=barrier_in").command() != "barrier_out")
        throw trainrt::LaunchError("barrier failed");
    double slowest = 0;
    for (int owner = 0; owner < size; ++owner) {
        auto start = std::chrono::steady_clock::now();
        Message got = pmi.ask(fmt::format("cmd=get kvsname={} key={}", kvs, key(owner)));
        slowest = std::max(slowest, ms_since(start));
        if (got.find("rc") != "0" || got.find("value") != value(owner))
            throw trainrt::LaunchError(fmt::format("get {} gave rc={} value={}", key(owner),
                                                   got.find("rc").value_or("?"),
                                                   got.find("value").value_or("?")));
    }
    return slowest;
}

// Gets a key nobody put: whether it was (wrongly) found, and how long the answer took in ms.
std::pair<bool, double> get_missing(Pmi1Client& pmi, const std::string& kvs,
                                    const std::string& key) {
    auto start = std::chrono::steady_clock::now();
    Message reply = pmi.ask(fmt::format("cmd=get kvsname={} key={}", kvs, key));
    return {reply.find("rc") == "0", ms_since(start)};
}

}  // namespace

nlohmann::ordered_json run_pmi1_kvs_check(const trainrt::launch::LaunchInfo& info) {
    Pmi1Client pmi(pmi_fd());
    if (pmi.ask("cmd=init pmi_version=1 pmi_subversion=1").find("rc") != "0")
        throw trainrt::LaunchError("PMI-1 init refused");
    const std::string kvs = pmi.ask("cmd=get_my_kvsname").require("kvsname");
    double slowest = 0;
    for (int round = 1; round <= 2; ++round)
        slowest = std::max(slowest, exchange_round(pmi, kvs, round, info.world_rank,
                                                   info.world_size));
    // Missing keys: one whose name gives no owner, one whose name names another rank.
    const int other = (info.world_rank + 1) % info.world_size;
    auto [missing_found, missing_ms] = get_missing(pmi, kvs, "probe.missing");
    auto [named_found, named_ms] = get_missing(pmi, kvs, fmt::format("-bcast-999-{}", other));
    pmi.ask("cmd=finalize");
    return {{"kvs_check", missing_found || named_found ? "missing key found" : "ok"},
            {"launcher_rank", info.world_rank},
            {"launcher_size", info.world_size},
            {"max_get_ms", slowest},
            {"missing_get_ms", missing_ms},
            {"missing_named_get_ms", named_ms}};
}
