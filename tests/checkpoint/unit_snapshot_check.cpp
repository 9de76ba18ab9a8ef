// The background snapshot's sample check (checkpoint/write/snapshot_check.hpp).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "checkpoint/write/snapshot_check.hpp"

using namespace trainrt::checkpoint;
using Catch::Matchers::Contains;

TEST_CASE("snapshot samples: equal bytes match, a sampled word or the tail changed does not", "[checkpoint]") {
    std::vector<unsigned char> block(8 * 1000 + 5);
    for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<unsigned char>(i * 7);
    const BlockSamples samples = sample_block(block.data(), block.size());
    CHECK(samples.words.size() == kSnapshotSamples + 1);
    CHECK(same_samples(samples, block.data(), block.size()));
    std::vector<unsigned char> copy = block;
    CHECK(same_samples(samples, copy.data(), copy.size()));
    copy[0] ^= 1;  // the first word is always sampled
    CHECK_FALSE(same_samples(samples, copy.data(), copy.size()));
    copy = block;
    copy.back() ^= 1;  // the tail bytes
    CHECK_FALSE(same_samples(samples, copy.data(), copy.size()));
    copy = block;
    const std::size_t last_sampled_word = (kSnapshotSamples - 1) * 1000 / kSnapshotSamples;
    copy[8 * last_sampled_word] ^= 1;
    CHECK_FALSE(same_samples(samples, copy.data(), copy.size()));
}

TEST_CASE("snapshot samples: a block under one word is its tail", "[checkpoint]") {
    const unsigned char bytes[3] = {1, 2, 3};
    const BlockSamples samples = sample_block(bytes, 3);
    CHECK(samples.words.size() == 1);
    const unsigned char other[3] = {1, 2, 4};
    CHECK_FALSE(same_samples(samples, other, 3));
}

TEST_CASE("snapshot problem: names the tensor and when it changed", "[checkpoint]") {
    std::vector<double> reported(4096, 1.0), copy = reported, live = reported;
    const BlockSamples samples = sample_block(reported.data(), reported.size() * 8);
    CHECK(snapshot_problem("w", samples, copy.data(), live.data(), live.size() * 8).empty());
    live[0] = 2.0;  // changed after the copy was taken
    CHECK_THAT(snapshot_problem("w", samples, copy.data(), live.data(), live.size() * 8),
               Contains("tensor 'w' changed while its background snapshot copied it"));
    copy[0] = 2.0;  // the copy itself holds the change
    CHECK_THAT(snapshot_problem("w", samples, copy.data(), live.data(), live.size() * 8),
               Contains("tensor 'w' changed after report() and before its background snapshot"));
}
