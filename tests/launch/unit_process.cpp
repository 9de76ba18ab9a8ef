// launch::Child: a child's exit code stays readable once it was reaped, however it was.
#include <catch2/catch.hpp>

#include <csignal>

#include "launch/process.hpp"

using namespace trainrt;

TEST_CASE("child: the exit code after wait is what poll and wait give again", "[launch]") {
    launch::Child child = launch::spawn({"sh", "-c", "exit 3"});
    CHECK(child.wait() == 3);
    CHECK(child.poll() == 3);
    CHECK(child.wait() == 3);
}

TEST_CASE("child: a stopped child reports the signal that ended it", "[launch]") {
    launch::Child child = launch::spawn({"sleep", "30"});
    CHECK(child.poll() == -1);  // running
    child.stop(5);
    CHECK(child.poll() == 128 + SIGTERM);
    launch::Child moved = std::move(child);
    CHECK(moved.wait() == 128 + SIGTERM);
}
