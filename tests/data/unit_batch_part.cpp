// trainrt::batch_part: a global batch split over any number of ranks.
#include <catch2/catch.hpp>

#include <set>

#include "trainrt/data.hpp"
#include "trainrt/error.hpp"

using trainrt::batch_part;
using trainrt::global_batches;

TEST_CASE("every position of a global batch is trained by exactly one rank", "[data][batch]") {
    for (int ranks = 1; ranks <= 5; ++ranks)
        for (std::size_t batch : {1, 2, 3, 7, 10, 13, 64})
            for (std::size_t real : {1, 7, 100, 103, 60000}) {
                if (batch < static_cast<std::size_t>(ranks)) continue;
                for (std::size_t k = 0; k < global_batches(real, batch); ++k) {
                    const std::size_t begin = k * batch, end = std::min(begin + batch, real);
                    std::multiset<std::size_t> seen;
                    std::size_t smallest = batch, largest = 0;
                    for (int rank = 0; rank < ranks; ++rank) {
                        auto part = batch_part(k, real, batch, ranks, rank);
                        // shard index i of rank r holds position i * ranks + r (strided shard)
                        for (std::size_t i = part.first; i < part.first + part.count; ++i)
                            seen.insert(i * static_cast<std::size_t>(ranks) + static_cast<std::size_t>(rank));
                        smallest = std::min(smallest, part.count);
                        largest = std::max(largest, part.count);
                        CHECK(part.mean_over * ranks == Approx(static_cast<double>(end - begin)));
                    }
                    INFO("ranks " << ranks << " batch " << batch << " real " << real << " k " << k);
                    REQUIRE(seen.size() == end - begin);
                    CHECK(*seen.begin() == begin);
                    CHECK(*seen.rbegin() == end - 1);
                    CHECK(std::set<std::size_t>(seen.begin(), seen.end()).size() == seen.size());
                    CHECK(largest - smallest <= 1);
                }
            }
}

TEST_CASE("an even split is the one trained before: batch / ranks from k * batch / ranks", "[data][batch]") {
    for (int ranks : {1, 2, 4})
        for (std::size_t k : {0, 1, 936}) {
            auto part = batch_part(k, 60000, 64, ranks, ranks - 1);
            CHECK(part.first == k * 64 / static_cast<std::size_t>(ranks));
            CHECK(part.count == 64 / static_cast<std::size_t>(ranks));
            CHECK(part.mean_over == static_cast<double>(part.count));
        }
    auto last = batch_part(937, 60000, 64, 2, 1);  // 32 samples left: 16 each
    CHECK(last.count == 16);
    CHECK(last.mean_over == 16.0);
}

TEST_CASE("uneven: 64 samples on 3 ranks are 22, 21, 21, each weighted by 64 / 3", "[data][batch]") {
    CHECK(batch_part(0, 60000, 64, 3, 0).count == 22);
    CHECK(batch_part(0, 60000, 64, 3, 1).count == 21);
    CHECK(batch_part(0, 60000, 64, 3, 2).count == 21);
    CHECK(batch_part(1, 60000, 64, 3, 0).first == 22);
    CHECK(batch_part(0, 60000, 64, 3, 2).mean_over == Approx(64.0 / 3.0));
    // a last block smaller than the world: some ranks get nothing
    CHECK(batch_part(0, 2, 4, 4, 3).count == 0);
    CHECK(batch_part(0, 2, 4, 4, 1).count == 1);
}

TEST_CASE("batch_part refuses what has no answer", "[data][batch]") {
    CHECK_THROWS_AS(global_batches(10, 0), trainrt::DataError);
    CHECK_THROWS_AS(batch_part(1, 10, 10, 2, 0), trainrt::DataError);
    CHECK_THROWS_AS(batch_part(0, 10, 5, 2, 2), trainrt::DataError);
    CHECK(global_batches(0, 4) == 0);
}
