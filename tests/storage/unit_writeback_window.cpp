// Writeback started a window at a time (storage/posix.hpp: WritebackWindow): small writes that
// continue each other are gathered, a write elsewhere starts what was gathered first.
#include <catch2/catch.hpp>

#include <cstdint>
#include <utility>
#include <vector>

#include "storage/posix.hpp"

using namespace trainrt::storage;
using Range = std::pair<std::uint64_t, std::uint64_t>;

TEST_CASE("WritebackWindow: back-to-back writes start once the window is full", "[storage]") {
    std::vector<Range> started;
    WritebackWindow window([&](std::uint64_t offset, std::uint64_t length) { started.emplace_back(offset, length); }, 10);
    window.wrote(0, 4);
    window.wrote(4, 4);
    CHECK(started.empty());
    window.wrote(8, 4);
    CHECK(started == std::vector<Range>{{0, 12}});
    window.wrote(12, 25);  // one write larger than the window: started at once
    CHECK(started == std::vector<Range>{{0, 12}, {12, 25}});
}

TEST_CASE("WritebackWindow: a write that does not continue the window starts the gathered bytes first",
          "[storage]") {
    std::vector<Range> started;
    WritebackWindow window([&](std::uint64_t offset, std::uint64_t length) { started.emplace_back(offset, length); }, 100);
    window.wrote(40, 2);
    window.wrote(50, 2);  // a gap
    CHECK(started == std::vector<Range>{{40, 2}});
    window.wrote(10, 5);  // before it
    CHECK(started == std::vector<Range>{{40, 2}, {50, 2}});
    window.wrote(15, 95);
    CHECK(started == std::vector<Range>{{40, 2}, {50, 2}, {10, 100}});
}

TEST_CASE("WritebackWindow: nothing is started for nothing gathered", "[storage]") {
    std::vector<Range> started;
    WritebackWindow window([&](std::uint64_t offset, std::uint64_t length) { started.emplace_back(offset, length); }, 8);
    window.wrote(0, 8);
    window.wrote(100, 3);  // the window was just started: the jump starts nothing more
    CHECK(started == std::vector<Range>{{0, 8}});
}
