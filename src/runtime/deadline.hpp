#pragma once
// When to stop for the job's time limit: early enough to reach the next step boundary, commit a
// checkpoint and exit before Slurm kills the step. Pure bookkeeping (no clock, no Slurm): the
// caller feeds it times, so it is unit-tested directly.
#include <deque>
#include <optional>
#include <string>

namespace trainrt::runtime {

class DeadlinePolicy {
public:
    // `margin_s`: the configured margin; nullopt for auto.
    explicit DeadlinePolicy(std::optional<double> margin_s) : configured_margin_(margin_s) {}

    // Monotonic time (s) of the time limit; nullopt: no limit known.
    void set_deadline(std::optional<double> deadline) { deadline_ = deadline; }
    const std::optional<double>& deadline() const { return deadline_; }

    void record_step(double seconds);        // time between two step boundaries
    void record_checkpoint(double seconds);  // time a checkpoint took to commit

    // Auto: a fixed 10 s (exit, requeue, Slurm's own delays) plus twice the slowest recent step
    // and twice the slowest recent checkpoint.
    double margin() const;
    bool should_stop(double now) const { return deadline_ && now + margin() >= *deadline_; }

    // "margin 12.0 s (auto: step 0.004 s, checkpoint 0.8 s)" for the log.
    std::string describe_margin() const;

private:
    static constexpr std::size_t window = 32;
    std::optional<double> configured_margin_;
    std::optional<double> deadline_;
    std::deque<double> steps_;
    std::deque<double> checkpoints_;
};

}  // namespace trainrt::runtime
