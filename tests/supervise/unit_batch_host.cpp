// The batch host's watcher (batch_host.hpp) on the real clock: a takeover after peer_timeout of
// silence, and none while the batch host's ranks beat.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "runlog/clock.hpp"
#include "runlog/heartbeats.hpp"
#include "supervise/batch_host.hpp"
#include "temp_run_dir.hpp"

using namespace trainrt;
using trainrt::testing::TempRunDir;

namespace {

const std::function<bool()> never = [] { return false; };
const supervise::Say quiet = [](const std::string&) {};

}  // namespace

TEST_CASE("watcher: takes over once the batch host's wrapper and ranks are silent for peer_timeout", "[lifecycle]") {
    TempRunDir dir;
    const double timeout = 1.0;  // beats every 0.5 s
    const double now = runlog::now_seconds();
    runlog::write_wrapper_beat(dir.str(), {"node1", now - 100, now - 30});
    const supervise::Takeover takeover = *supervise::await_takeover(dir.str(), timeout, "node1", "node3", supervise::system_clock(), never, quiet);
    CHECK(takeover.step_started == Approx(now - 100));
    CHECK(takeover.silent_s > timeout);
    CHECK(runlog::now_seconds() - now < 5);  // the silence counts from this call: about a timeout
    CHECK(runlog::read_takeover(dir.str()) == std::optional<std::string>("node3"));
}

TEST_CASE("watcher: a batch host whose ranks still beat is alive, whatever its wrapper's beat", "[lifecycle]") {
    TempRunDir dir;
    const double timeout = 3.0;  // 30 beat periods: a rank thread starved on a loaded machine is no death
    const double start = runlog::now_seconds();
    runlog::write_wrapper_beat(dir.str(), {"node1", start - 100, start - 30});
    std::atomic<bool> beating{true};
    std::atomic<double> last_beat{start};
    std::thread ranks([&] {  // node1's ranks beat for 4 s more, then the node dies
        while (beating && runlog::now_seconds() - start < 4) {
            last_beat = runlog::now_seconds();
            runlog::write_heartbeat(dir.str(), "node1", last_beat);
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    });
    supervise::await_takeover(dir.str(), timeout, "node1", "node2", supervise::system_clock(), never, quiet);
    const double took_over = runlog::now_seconds();
    beating = false;
    ranks.join();
    CHECK(took_over - last_beat > timeout);  // silent for the timeout after the last beat, not before
    CHECK(took_over - start > 4);
    CHECK(runlog::read_takeover(dir.str()) == std::optional<std::string>("node2"));
}
