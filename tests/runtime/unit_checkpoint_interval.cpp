// runtime/checkpoint_interval: when [checkpoint] interval makes a checkpoint due, fed times by hand.
#include <catch2/catch.hpp>

#include <cmath>

#include "runtime/checkpoint_interval.hpp"

using namespace trainrt;
using runtime::CheckpointInterval;

TEST_CASE("checkpoint interval: Young/Daly sqrt(2 C M) minimizes the expected waste", "[checkpoint_interval]") {
    const double cost = 12.0, mtbf = 6 * 3600.0;
    const double best = runtime::young_daly_interval(cost, mtbf);
    CHECK(best == Approx(std::sqrt(2 * 12.0 * 21600.0)));  // 720 s
    CHECK(best == Approx(720.0));
    CHECK(runtime::expected_waste(best, cost, mtbf) == Approx(12.0 / 720 + 720.0 / 43200));
    for (const double other : {0.5 * best, 0.9 * best, 1.1 * best, 2 * best})
        CHECK(runtime::expected_waste(other, cost, mtbf) > runtime::expected_waste(best, cost, mtbf));
}

TEST_CASE("checkpoint interval: failure.mtbf 0 is 30 days over the nodes", "[checkpoint_interval]") {
    CHECK(runtime::job_mtbf(0, 4).seconds == Approx(30 * 86400.0 / 4));
    CHECK(runtime::job_mtbf(0, 0).seconds == Approx(30 * 86400.0));
    CHECK(runtime::job_mtbf(3600, 64).seconds == Approx(3600));
    CHECK(runtime::job_mtbf(3600, 64, 5, 100).seconds == Approx(3600));  // configured wins over the record
    CHECK(runtime::job_mtbf(3600, 64).source == "failure.mtbf");
    CHECK(runtime::job_mtbf(0, 4).source.find("4 node") != std::string::npos);
    CHECK(runtime::job_mtbf(0, 4, 0, 7200).seconds == Approx(30 * 86400.0 / 4));  // no failure: the default
}

TEST_CASE("checkpoint interval: failure.mtbf 0 learns from the run's failures", "[checkpoint_interval]") {
    const double fallback = 30 * 86400.0 / 4;
    const runtime::Mtbf one = runtime::job_mtbf(0, 4, 1, 600);  // one failure after 10 minutes
    CHECK(one.seconds == Approx((600 + fallback) / 2));        // halved, not 600 s
    CHECK(one.source.find("1 failure(s) in 600 s") != std::string::npos);
    // Many failures in a long record pull the estimate to the record's own rate.
    const double week = 7 * 86400.0;
    const runtime::Mtbf many = runtime::job_mtbf(0, 4, 100, 100 * week);
    CHECK(many.seconds == Approx(week).epsilon(0.01));

    // The auto interval follows the learned MTBF.
    CheckpointInterval clock(std::nullopt, fallback);
    clock.recall_costs({2.0});
    clock.recall_mtbf(one);
    CHECK(*clock.interval() == Approx(std::sqrt(2 * 2.0 * one.seconds)));
    CHECK(clock.describe().find("the run's record") != std::string::npos);
}

TEST_CASE("checkpoint interval: off never, fixed every N s after the last checkpoint", "[checkpoint_interval]") {
    CheckpointInterval off(0.0, 1000);
    off.start(0);
    CHECK(off.off());
    CHECK_FALSE(off.due(1e9));

    CheckpointInterval fixed(60.0, 1000);
    CHECK_FALSE(fixed.due(100));  // not started: no boundary yet
    fixed.start(100);
    CHECK_FALSE(fixed.due(159.9));
    CHECK(fixed.due(160));
    fixed.record_checkpoint(165, 3.0);  // any checkpoint restarts the clock; the cost does not matter
    CHECK_FALSE(fixed.due(224.9));
    CHECK(fixed.due(225));
    CHECK(*fixed.interval() == Approx(60));
}

TEST_CASE("checkpoint interval auto: due at once to measure C, then sqrt(2 C M) from the worst recent cost",
          "[checkpoint_interval]") {
    const double mtbf = 20000;
    CheckpointInterval clock(std::nullopt, mtbf);
    clock.start(0);
    CHECK_FALSE(clock.interval());
    CHECK(clock.due(0));  // the first boundary: a checkpoint measures the cost
    CHECK(clock.describe().find("no checkpoint cost known yet") != std::string::npos);
    clock.record_checkpoint(1, 0.9);  // C = 0.9: sqrt(2 x 0.9 x 20000) = 189.74 s
    CHECK(*clock.interval() == Approx(std::sqrt(2 * 0.9 * mtbf)));
    CHECK_FALSE(clock.due(1 + 189));
    CHECK(clock.due(1 + 190));
    clock.record_checkpoint(200, 2.5);  // a slower save: the largest of the last 3 is used
    CHECK(*clock.interval() == Approx(std::sqrt(2 * 2.5 * mtbf)));
    clock.record_checkpoint(600, 0.4);
    clock.record_checkpoint(900, 0.4);
    CHECK(*clock.interval() == Approx(std::sqrt(2 * 2.5 * mtbf)));  // 2.5 still in the window of 3
    clock.record_checkpoint(1200, 0.4);  // 2.5 and 0.9 left the window of 3
    CHECK(*clock.interval() == Approx(std::sqrt(2 * 0.4 * mtbf)));
    const std::string line = clock.describe();
    CHECK(line.find("sqrt(2 x C 0.4 s x MTBF 20000 s") != std::string::npos);
    CHECK(line.find("expected waste") != std::string::npos);
}

TEST_CASE("checkpoint interval auto: a cost from the run's record is known from the start", "[checkpoint_interval]") {
    CheckpointInterval clock(std::nullopt, 5000);
    clock.recall_costs({0.5, 2.0});
    clock.start(10);
    CHECK(*clock.interval() == Approx(std::sqrt(2 * 2.0 * 5000)));  // 141.4 s
    CHECK_FALSE(clock.due(10));
    CHECK(clock.due(10 + 141.5));
}
