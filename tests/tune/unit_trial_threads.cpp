// A sweep's trials outside Slurm share the node's CPUs (tune/trial_threads.hpp).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "trainrt/threads.hpp"
#include "tune/trial_threads.hpp"

using namespace trainrt;

TEST_CASE("tune: ranks running at once split the CPUs, at least one thread each", "[tune]") {
    CHECK(tune::trial_threads(2, 2) == 1);
    CHECK(tune::trial_threads(16, 4) == 4);
    CHECK(tune::trial_threads(16, 5) == 3);
    CHECK(tune::trial_threads(2, 8) == 1);
    CHECK(tune::trial_threads(8, 0) == 8);
}

TEST_CASE("tune: a trial's OMP_NUM_THREADS is its share, unless the user set one or Slurm places it", "[tune]") {
    const std::vector<std::string> outside = tune::trial_environment(2, nullptr, false);
    REQUIRE(outside.size() == 1);
    CHECK(outside[0] == "OMP_NUM_THREADS=" + std::to_string(tune::trial_threads(usable_cpus(), 2)));
    CHECK(tune::trial_environment(2, "", false) == outside);
    CHECK(tune::trial_environment(2, "3", false).empty());
    CHECK(tune::trial_environment(2, nullptr, true).empty());
}
