#include <catch2/catch.hpp>
#include <mpi.h>

#include "comm/mpi_communicator.hpp"
#include "metrics/rank_summary.hpp"

using namespace trainrt;

namespace {

std::unique_ptr<Communicator> world() { return comm::make_mpi_communicator(MPI_COMM_WORLD); }

// Step times: iteration 1 s everywhere, own work `work` s; then `loss` = rank / 10.
metrics::NamedValues values(double work, double loss) {
    return {{"_time_this_iter_s", 1.0}, {"_time_compute_s", work}, {"loss", loss}};
}

}  // namespace

TEST_CASE("cross-rank min, mean, max and the rank of the max", "[metrics]") {
    auto comm = world();
    const int n = comm->size(), rank = comm->rank();
    metrics::Votes votes{rank == 1 ? 15 : 0, 0, rank};  // e.g. the stop agreement's
    const auto summary = metrics::summarize_ranks(*comm, values(0.5, rank / 10.0), 1.5, votes);
    CHECK_FALSE(summary.names_differ);
    const auto& loss = summary.ranks.at("loss");
    CHECK(loss.at("min").get<double>() == 0.0);
    CHECK(loss.at("max").get<double>() == Approx((n - 1) / 10.0));
    CHECK(loss.at("mean").get<double>() == Approx((n - 1) / 20.0));
    CHECK(loss.at("max_rank").get<int>() == n - 1);
    CHECK(summary.ranks.at("_time_this_iter_s").at("max_rank").get<int>() == 0);  // ties: lowest rank
    CHECK_FALSE(summary.straggler);  // even work
    CHECK(votes == metrics::Votes{15, 0, n - 1});  // maxed over the ranks, in the same collective
}

TEST_CASE("the last rank working 4x as long is the straggler; threshold 0 turns it off", "[metrics]") {
    auto comm = world();
    const int n = comm->size();
    const double work = comm->rank() == n - 1 ? 0.8 : 0.2;
    metrics::Votes votes{};
    const auto flagged = metrics::summarize_ranks(*comm, values(work, 1.0), 1.5, votes);
    REQUIRE(flagged.straggler);
    CHECK(flagged.straggler->rank == n - 1);
    CHECK(flagged.straggler->work_s == 0.8);
    CHECK(flagged.straggler->others_mean_s == Approx(0.2));
    CHECK_FALSE(metrics::summarize_ranks(*comm, values(work, 1.0), 0.0, votes).straggler);
    CHECK_FALSE(metrics::summarize_ranks(*comm, values(work, 1.0), 5.0, votes).straggler);  // 4x < 5x
}

TEST_CASE("ranks reporting other metric names: only the step times are summarized", "[metrics]") {
    auto comm = world();
    metrics::NamedValues mine = values(0.1, 1.0);
    if (comm->rank() == 1) mine.emplace_back("extra", 2.0);
    metrics::Votes votes{};
    const auto summary = metrics::summarize_ranks(*comm, mine, 1.5, votes);
    CHECK(summary.names_differ);
    CHECK(summary.ranks.contains("_time_compute_s"));
    CHECK_FALSE(summary.ranks.contains("loss"));
}

TEST_CASE("more metrics than the record holds: the first ones are summarized", "[metrics]") {
    auto comm = world();
    metrics::NamedValues many = values(0.1, 1.0);
    for (int i = 0; i < 40; ++i) many.emplace_back("m" + std::to_string(i), i);
    metrics::Votes votes{};
    const auto summary = metrics::summarize_ranks(*comm, many, 1.5, votes);
    CHECK(summary.ranks.size() == metrics::max_summarized);
    // The two step times and loss, then m0 .. m(max_summarized - 4).
    CHECK(summary.ranks.contains("m" + std::to_string(metrics::max_summarized - 4)));
    CHECK_FALSE(summary.ranks.contains("m" + std::to_string(metrics::max_summarized - 3)));
}
