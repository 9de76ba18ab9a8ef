#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runlog/clock.hpp"
#include "runlog/events.hpp"
#include "runlog/heartbeats.hpp"
#include "trainrt/error.hpp"
#include "temp_run_dir.hpp"

using namespace trainrt;
using trainrt::testing::TempRunDir;

namespace {

std::vector<std::string> names(const std::vector<runlog::SilentHost>& silent) {
    std::vector<std::string> out;
    for (const auto& host : silent) out.push_back(host.host);
    return out;
}

}  // namespace

TEST_CASE("heartbeats: a beat is read back; none is nullopt", "[heartbeats]") {
    TempRunDir dir;
    runlog::write_heartbeat(dir.str(), "node1", 1700000000.25);
    REQUIRE(runlog::read_heartbeat(dir.str(), "node1").has_value());
    CHECK(*runlog::read_heartbeat(dir.str(), "node1") == Approx(1700000000.25));
    CHECK_FALSE(runlog::read_heartbeat(dir.str(), "node2").has_value());
    runlog::write_heartbeat(dir.str(), "node1", 1700000010.5);  // rewritten, not appended
    CHECK(*runlog::read_heartbeat(dir.str(), "node1") == Approx(1700000010.5));
}

TEST_CASE("heartbeats: silence counts from the last beat, or from `since` when later or missing", "[heartbeats]") {
    TempRunDir dir;
    runlog::write_heartbeat(dir.str(), "a", 1000);  // beat before `since`: an earlier attempt's
    runlog::write_heartbeat(dir.str(), "b", 1150);
    runlog::write_heartbeat(dir.str(), "c", 1195);
    const std::vector<std::string> hosts{"a", "b", "c", "never"};
    // since 1100, now 1200, limit 60: a and never silent 100 s, b 50 s, c 5 s.
    auto silent = runlog::silent_hosts(dir.str(), hosts, 1100, 1200, 60);
    CHECK(names(silent) == std::vector<std::string>{"a", "never"});
    CHECK(silent[0].silent_s == Approx(100));
    CHECK(names(runlog::silent_hosts(dir.str(), hosts, 1100, 1200, 40)) == std::vector<std::string>{"a", "b", "never"});
    CHECK(runlog::silent_hosts(dir.str(), hosts, 1190, 1200, 60).empty());
}

TEST_CASE("heartbeats: the interval fits several beats in the timeout, within 0.5..10 s", "[heartbeats]") {
    CHECK(runlog::heartbeat_interval(60) == Approx(10));
    CHECK(runlog::heartbeat_interval(30) == Approx(5));
    CHECK(runlog::heartbeat_interval(600) == Approx(10));
    CHECK(runlog::heartbeat_interval(1) == Approx(0.5));
}

TEST_CASE("the wrapper's beat and the takeover record are written and read back", "[lifecycle]") {
    TempRunDir dir;
    CHECK_FALSE(runlog::read_wrapper_beat(dir.str()));
    runlog::write_wrapper_beat(dir.str(), {"node1", 1700000000, 1700000042.5});
    const auto beat = runlog::read_wrapper_beat(dir.str());
    REQUIRE(beat);
    CHECK(beat->host == "node1");
    CHECK(beat->step_started == 1700000000);
    CHECK(beat->time == 1700000042.5);
    // A dot name: never a node's beat, never read as one.
    CHECK_FALSE(runlog::read_heartbeat(dir.str(), "node1"));
    CHECK_FALSE(runlog::read_takeover(dir.str()));
    runlog::write_takeover(dir.str(), "node3", 1700000100);
    CHECK(runlog::read_takeover(dir.str()) == std::optional<std::string>("node3"));
    runlog::remove_takeover(dir.str());
    CHECK_FALSE(runlog::read_takeover(dir.str()));
    runlog::remove_takeover(dir.str());  // none: nothing to do
}

