#include <catch2/catch.hpp>

#include "runtime/stop_criteria.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;
using namespace trainrt::runtime;

namespace {

std::vector<StopCriterion> parsed(const std::string& text) {
    StopSettings settings = StopSettings::defaults();
    settings.criteria.value = text;
    return stop_criteria(settings);
}

}  // namespace

TEST_CASE("[stop] criteria: a comma list of METRIC>=NUMBER") {
    CHECK(parsed("").empty());
    const auto criteria = parsed("accuracy>=0.9, training_iteration >= 20");
    REQUIRE(criteria.size() == 2);
    CHECK(criteria[0].metric == "accuracy");
    CHECK(criteria[0].threshold == 0.9);
    CHECK(criteria[1].metric == "training_iteration");
    CHECK(criteria[1].threshold == 20);
    CHECK_THROWS_AS(parsed("accuracy"), ConfigError);
    CHECK_THROWS_AS(parsed("accuracy>=high"), ConfigError);
    CHECK_THROWS_AS(parsed(">=3"), ConfigError);
    CHECK_THROWS_WITH(parsed("accuracy>0.9"), Catch::Contains("stop.criteria") && Catch::Contains("METRIC>=NUMBER"));
}

TEST_CASE("A criterion is met when a reported value reaches its threshold (Ray's stop dict)") {
    const auto criteria = parsed("accuracy>=0.9,training_iteration>=5,time_total_s>=60");
    CHECK_FALSE(criterion_met(criteria, Metrics().set("accuracy", 0.5), 1, 1.0));
    CHECK(criterion_met(criteria, Metrics().set("accuracy", 0.9), 1, 1.0) == std::string("accuracy = 0.9 >= 0.9"));
    CHECK(criterion_met(criteria, Metrics().set("loss", 1.0), 5, 1.0) == std::string("training_iteration = 5 >= 5"));
    CHECK(criterion_met(criteria, Metrics(), 2, 61.0));
    CHECK_FALSE(criterion_met(criteria, Metrics().set("accuracy", std::string("high")), 1, 1.0));  // not a number
    CHECK(criterion_met(parsed("steps>=3"), Metrics().set("steps", std::int64_t{3}), 1, 0.0));
}
