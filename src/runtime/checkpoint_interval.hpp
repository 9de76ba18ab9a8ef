#pragma once
// When a time-based checkpoint is due ([checkpoint] interval): a fixed number of seconds since the
// last checkpoint, or auto, Young/Daly's interval from the measured checkpoint cost and the job's
// mean time between failures ([failure] mtbf). Pure bookkeeping (no clock, no communication): the
// caller feeds it monotonic times, so it is unit-tested directly. Rank 0's verdict is the one the
// ranks agree on (StopCoordinator), so every rank checkpoints at the same boundary.
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace trainrt::runtime {

// The interval that minimizes the expected time lost, checkpoint cost C per interval plus half an
// interval redone per failure, for a mean time between failures M >> C: sqrt(2 C M) (Young 1974;
// the first order of Daly 2006).
double young_daly_interval(double cost_s, double mtbf_s);

// The share of time that model expects lost at interval `interval_s`: C / interval + interval / 2M.
double expected_waste(double interval_s, double cost_s, double mtbf_s);

struct Mtbf {
    double seconds = 0;
    std::string source;  // for the log: "failure.mtbf", "30 days / 4 node(s) ...", "run record ..."
};

// [failure] mtbf as configured. For 0: the documented default M0, 30 days over the job's nodes (a
// node failing about once a month; the job fails when any of its nodes does), unless the run's
// record holds failures: k failed attempts in T seconds of attempts give (T + M0) / (k + 1), the
// default counted as one failure more in M0 seconds, so that one early failure does not make the
// run checkpoint constantly, and many failures pull the estimate to T / k.
Mtbf job_mtbf(double configured_s, int nodes, int failures_seen = 0, double seconds_seen = 0);
inline constexpr double kNodeMtbfSeconds = 30 * 86400.0;

class CheckpointInterval {
public:
    // `interval_s`: seconds (0: off, never due) or nullopt for auto.
    // `mtbf_source`: where mtbf_s came from, for the log ("failure.mtbf", "30 days / 4 nodes").
    CheckpointInterval(std::optional<double> interval_s, double mtbf_s, std::string mtbf_source = "failure.mtbf");

    // Checkpoint stalls the run's record already holds (earlier attempts'), oldest first: a
    // resumed run knows its cost before its first checkpoint. Before start().
    void recall_costs(const std::vector<double>& stalls_s);
    // The MTBF learned from the run's record (job_mtbf with its failures). Before start().
    void recall_mtbf(Mtbf mtbf);

    void start(double now);                             // at the run's first step boundary
    void record_checkpoint(double now, double cost_s);  // any committed checkpoint restarts the clock
    bool due(double now) const;

    bool off() const { return !automatic_ && fixed_s_ <= 0; }
    bool automatic() const { return automatic_; }
    // The cost auto uses: the largest of the last few stalls (a conservative C); nullopt before any.
    std::optional<double> cost() const;
    // Seconds between checkpoints; nullopt for auto before a cost is known (due at once: the first
    // checkpoint measures C).
    std::optional<double> interval() const;
    // One line for the log: the rule, its inputs and the expected waste.
    std::string describe() const;

private:
    static constexpr std::size_t kCostWindow = 3;
    bool automatic_ = false;
    double fixed_s_ = 0;
    double mtbf_s_ = 0;
    std::string mtbf_source_;
    std::deque<double> costs_;
    std::optional<double> last_;  // the last checkpoint, or the start
};

}  // namespace trainrt::runtime
