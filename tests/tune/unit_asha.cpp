// tune/asha: the rungs and the cutoff decisions of asynchronous successive halving.
#include <catch2/catch.hpp>

#include <vector>

#include "tune/asha.hpp"

using namespace trainrt::tune;

TEST_CASE("ASHA's rungs: grace_period x rf^k below max_t, then max_t") {
    AshaKeys asha = AshaKeys::defaults();
    asha.grace_period.value = 1, asha.reduction_factor.value = 3, asha.max_t.value = 20;
    CHECK(asha_rungs(asha) == std::vector<std::int64_t>{1, 3, 9, 20});
    asha.max_t.value = 3;
    CHECK(asha_rungs(asha) == std::vector<std::int64_t>{1, 3});
    CHECK(next_rung({1, 3}, 1) == 3);
    CHECK(next_rung({1, 3}, 3) == 0);
    asha.grace_period.value = 5, asha.max_t.value = 4;  // grace beyond max_t: one rung
    CHECK(asha_rungs(asha) == std::vector<std::int64_t>{4});
}

TEST_CASE("ASHA's cutoff: the 1 - 1/rf quantile of the rung's values (1/rf when minimizing)") {
    CHECK(asha_cutoff({0.5}, 3, true) == 0.5);  // the first trial at a rung always continues
    CHECK(asha_promotes(0.5, 0.5, true));
    const double cutoff = asha_cutoff({0.3, 0.1, 0.2}, 3, true);
    CHECK(cutoff == Approx(0.2 + 0.1 / 3));
    CHECK_FALSE(asha_promotes(0.2, cutoff, true));
    CHECK(asha_promotes(0.3, cutoff, true));
    const double low = asha_cutoff({0.3, 0.1, 0.2}, 3, false);
    CHECK(low == Approx(0.1 + 0.1 * 2.0 / 3));
    CHECK(asha_promotes(0.1, low, false));
    CHECK_FALSE(asha_promotes(0.2, low, false));
}

TEST_CASE("The rung a row decides: the highest one from the trial's next rung up that it reached") {
    const std::vector<std::int64_t> rungs{1, 3, 9};
    CHECK(rung_at(rungs, 1, 0.0) == 0);
    CHECK(rung_at(rungs, 1, 1.0) == 1);
    CHECK(rung_at(rungs, 1, 2.0) == 1);
    CHECK(rung_at(rungs, 3, 2.0) == 0);  // rung 1 decided already: the next one is 3
    CHECK(rung_at(rungs, 1, 4.0) == 3);  // a row that passed two rungs decides the higher
    CHECK(rung_at(rungs, 9, 12.0) == 9);
    CHECK(rungs_from(rungs, 1) == "1,3,9");
    CHECK(rungs_from(rungs, 3) == "3,9");
    CHECK(rungs_from(rungs, 10).empty());
}
