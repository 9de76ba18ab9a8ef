// tune/median_stopping: the median stopping rule's verdict and the reports it is decided at.
#include <catch2/catch.hpp>

#include <vector>

#include "tune/median_stopping.hpp"

using namespace trainrt::tune;

namespace {

std::vector<TimedValue> rows(std::vector<double> values) {
    std::vector<TimedValue> series;
    for (std::size_t i = 0; i < values.size(); ++i) series.push_back({static_cast<double>(i + 1), values[i]});
    return series;
}

}  // namespace

TEST_CASE("the median stopping rule stops a trial whose best is worse than the others' running means' median") {
    const std::vector<std::vector<TimedValue>> others{rows({0.5, 0.6, 0.7}), rows({0.4, 0.5, 0.6}), rows({0.6, 0.7, 0.8})};
    // running means over 1..3: 0.6, 0.5, 0.7: median 0.6
    MedianVerdict verdict = median_verdict(rows({0.1, 0.3, 0.5}), others, 3, 1, 3, true);
    CHECK(verdict.stop);
    CHECK(verdict.median == Approx(0.6));
    CHECK(verdict.samples == 3);
    CHECK_FALSE(median_verdict(rows({0.1, 0.3, 0.6}), others, 3, 1, 3, true).stop);  // equal is not worse
    CHECK(median_verdict(rows({0.7, 0.8, 0.9}), others, 3, 1, 3, false).stop);  // minimising: its best 0.7 > 0.6
    CHECK_FALSE(median_verdict(rows({0.1, 0.3, 0.5}), others, 3, 1, 3, false).stop);  // its best 0.1 < 0.6
}

TEST_CASE("the median stopping rule waits for its grace period and for enough trials beyond the time") {
    const std::vector<std::vector<TimedValue>> others{rows({0.5, 0.6, 0.7}), rows({0.4, 0.5}), rows({0.6, 0.7, 0.8})};
    CHECK_FALSE(median_verdict(rows({0.1, 0.1, 0.1}), others, 3, 1, 3, true).stop);  // one has not reached 3
    CHECK(median_verdict(rows({0.1, 0.1, 0.1}), others, 3, 1, 3, true).samples == 2);
    CHECK(median_verdict(rows({0.1, 0.1, 0.1}), others, 3, 1, 2, true).stop);
    CHECK_FALSE(median_verdict(rows({0.1, 0.1, 0.1}), others, 3, 4, 1, true).stop);  // before the grace period
    // the running mean starts at the grace period: over 2..3 the first trial's is 0.65
    CHECK(median_verdict(rows({0.1, 0.1, 0.1}), {rows({0.0, 0.6, 0.7})}, 3, 2, 1, true).median == Approx(0.65));
}
