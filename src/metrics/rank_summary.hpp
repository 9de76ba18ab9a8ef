#pragma once
// Cross-rank summaries of one report: for each numeric value, min / mean / max over the ranks and
// the rank holding the max, from ONE collective per report (an allgather of a fixed 256-byte
// record per rank), whatever the number of metrics. Ray keeps rank 0's metrics only; these show
// a rank that lags or diverges.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainrt/comm.hpp"

namespace trainrt::metrics {

// The values one rank summarizes, in its order: the two step times first, then the numeric
// metrics. At most `max_summarized` are summarized; later ones are not.
using NamedValues = std::vector<std::pair<std::string, double>>;
inline constexpr std::size_t max_summarized = 26;

// Small integers every rank contributes and gets back maxed over the ranks, in the same
// collective (the runtime's step-boundary agreement, a stop or a checkpoint due, and the
// non-finite check ride along, so a report is one collective).
using Votes = std::array<std::int64_t, 5>;

struct Straggler {
    int rank = -1;
    double work_s = 0;         // its own work in the iteration (_time_compute_s)
    double others_mean_s = 0;  // the other ranks' mean
};

struct RankSummary {
    nlohmann::ordered_json ranks = nlohmann::ordered_json::object();  // the row's "_ranks"
    bool names_differ = false;  // ranks reported other metric names: only the step times summarized
    std::optional<Straggler> straggler;
};

// Collective (every rank calls it at every report). `straggler_threshold` 0: none flagged.
// `votes` in: this rank's; out: the max over the ranks.
RankSummary summarize_ranks(Communicator& comm, const NamedValues& values, double straggler_threshold,
                            Votes& votes);

}  // namespace trainrt::metrics
