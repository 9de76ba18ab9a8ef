// tune/step_target: where a step that ended done met its target, and what a step to a target sets.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tune/step_target.hpp"

using namespace trainrt::tune;

TEST_CASE("a step's point: by epoch the last row of the target's epoch; by iteration the first row that reached it") {
    using trainrt::metrics::MetricPoint;
    const std::vector<MetricPoint> rows{{1.0, 3.0, 0.1}, {2.0, 4.0, 0.2}, {2.0, 6.0, 0.3}, {3.0, 7.0, 0.4}};
    // By iteration: no row at 5 (a report without the metric there): the step paused at 6.
    REQUIRE(step_point(rows, 5, true));
    CHECK(step_point(rows, 5, true)->time == 6);
    CHECK(step_point(rows, 5, true)->value == 0.3);
    CHECK(step_point(rows, 4, true)->time == 4);
    CHECK_FALSE(step_point(rows, 8, true));  // the step ended before its target
    // By epoch: the last row reported at epoch 2.
    REQUIRE(step_point(rows, 2, false));
    CHECK(step_point(rows, 2, false)->time == 2);
    CHECK(step_point(rows, 2, false)->value == 0.3);
    CHECK_FALSE(step_point(rows, 4, false));
    CHECK_FALSE(step_point({{std::nullopt, std::nullopt, 0.5}}, 1, true));  // a row without its time
}

TEST_CASE("a step to a target: train.epochs by epoch, a pause with the metric by training_iteration") {
    CHECK(step_to_target_args(false, 8, "acc") == std::vector<std::string>{"--train.epochs=8"});
    CHECK(step_to_target_args(true, 8, "acc") == std::vector<std::string>{"--stop.pause_by=training_iteration",
                                                                          "--stop.pause_at=8", "--stop.pause_metric=acc"});
}
