#include "checkpoint/write/snapshot_check.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace trainrt::checkpoint {

BlockSamples sample_block(const void* data, std::uint64_t bytes) {
    BlockSamples samples;
    const auto* base = static_cast<const unsigned char*>(data);
    const std::uint64_t words = bytes / 8;
    const std::uint64_t count = std::min<std::uint64_t>(words, kSnapshotSamples);
    for (std::uint64_t i = 0; i < count; ++i) {
        std::uint64_t word = 0;
        std::memcpy(&word, base + (i * words / count) * 8, 8);
        samples.words.push_back(word);
    }
    std::uint64_t tail = 0;
    std::memcpy(&tail, base + words * 8, bytes % 8);
    samples.words.push_back(tail);
    return samples;
}

bool same_samples(const BlockSamples& samples, const void* data, std::uint64_t bytes) {
    return sample_block(data, bytes).words == samples.words;
}

std::string snapshot_problem(const std::string& tensor, const BlockSamples& at_report, const void* copy,
                             const void* block, std::uint64_t bytes) {
    const char* advice = "the training function must call session.await_snapshot() before it changes the state it "
                         "reported (or set [checkpoint] snapshot = copy); the checkpoint was not committed";
    if (!same_samples(at_report, copy, bytes))
        return fmt::format("checkpoint: tensor '{}' changed after report() and before its background snapshot "
                           "copied it: {}", tensor, advice);
    if (!same_samples(at_report, block, bytes))
        return fmt::format("checkpoint: tensor '{}' changed while its background snapshot copied it: {}", tensor,
                           advice);
    return "";
}

}  // namespace trainrt::checkpoint
