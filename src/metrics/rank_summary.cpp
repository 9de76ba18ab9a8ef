#include "metrics/rank_summary.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <functional>

namespace trainrt::metrics {
namespace {

constexpr std::size_t step_times = 2;  // _time_this_iter_s, _time_compute_s: named alike everywhere

// One rank's part: the hash of its metric names (equal names mean equally many values), its
// votes, the values.
struct Record {
    std::uint64_t names_hash = 0;
    Votes votes{};
    std::array<double, max_summarized> values{};
};
static_assert(sizeof(Record) == 256);

Record pack(const NamedValues& values, const Votes& votes) {
    Record record;
    record.votes = votes;
    std::string names;
    const std::size_t count = std::min(values.size(), max_summarized);
    for (std::size_t i = 0; i < count; ++i) {
        names += values[i].first + '\n';
        record.values[i] = values[i].second;
    }
    record.names_hash = std::hash<std::string>{}(names);
    return record;
}

nlohmann::ordered_json stats_of(const std::vector<Record>& all, std::size_t slot) {
    double low = INFINITY, high = -INFINITY, sum = 0;
    int high_rank = 0;
    for (std::size_t rank = 0; rank < all.size(); ++rank) {
        const double value = all[rank].values[slot];
        low = std::min(low, value);
        sum += value;
        if (value > high) high = value, high_rank = static_cast<int>(rank);
    }
    return {{"min", low}, {"mean", sum / static_cast<double>(all.size())}, {"max", high}, {"max_rank", high_rank}};
}

// The rank whose own work exceeds `threshold` times the others' mean (one rank alone: none).
std::optional<Straggler> find_straggler(const std::vector<Record>& all, double threshold) {
    if (threshold <= 0 || all.size() < 2) return std::nullopt;
    const nlohmann::ordered_json work = stats_of(all, 1);
    const double high = work["max"].get<double>();
    const double others = (work["mean"].get<double>() * static_cast<double>(all.size()) - high) /
                          static_cast<double>(all.size() - 1);
    constexpr double noise_s = 0.005;  // below this a difference is scheduling noise
    if (high - others < noise_s || high <= threshold * others) return std::nullopt;
    return Straggler{work["max_rank"].get<int>(), high, others};
}

}  // namespace

RankSummary summarize_ranks(Communicator& comm, const NamedValues& values, double straggler_threshold,
                            Votes& votes) {
    const Record mine = pack(values, votes);
    std::vector<Record> all(static_cast<std::size_t>(comm.size()));
    comm.allgather(&mine, all.data(), sizeof(Record));
    for (const Record& other : all)
        for (std::size_t i = 0; i < votes.size(); ++i) votes[i] = std::max(votes[i], other.votes[i]);
    RankSummary summary;
    std::size_t slots = std::min(values.size(), max_summarized);
    for (const Record& other : all)
        if (other.names_hash != mine.names_hash) summary.names_differ = true;
    if (summary.names_differ) slots = std::min(slots, step_times);
    for (std::size_t slot = 0; slot < slots; ++slot) summary.ranks[values[slot].first] = stats_of(all, slot);
    if (slots >= step_times) summary.straggler = find_straggler(all, straggler_threshold);
    return summary;
}

}  // namespace trainrt::metrics
