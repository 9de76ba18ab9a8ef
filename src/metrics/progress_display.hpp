#pragma once
// Rank 0's progress on stdout: iteration, epoch (of the total when known), loss, accuracy,
// throughput (samples/s), elapsed training time and ETA. On a terminal one line is redrawn in
// place at every report; otherwise (Slurm's output file) a plain line is printed at the first
// report and then at most every `interval_s` seconds, and the last row at the end. Never both.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "config/settings.hpp"

#include "metrics/rows_file.hpp"

namespace trainrt::metrics {

enum class ProgressMode { tty, lines, off };

// "auto" picks tty when stdout is a terminal, else lines.
// [metrics] progress -> the mode; auto is tty on a terminal, lines otherwise.
ProgressMode progress_mode(ProgressSetting setting);

struct ProgressOptions {
    ProgressMode mode = ProgressMode::lines;
    double interval_s = 30;
    std::int64_t total_epochs = 0;  // 0: unknown (no ETA)
};

// "[trainrt 0] iter 12 | epoch 3/20 | loss 0.4123 | accuracy 0.8120 | 5321 samples/s | 0:01:23 | ETA 0:07:02"
// (the logger's tag first); `eta_s` < 0: none.
std::string progress_text(const Row& row, std::int64_t total_epochs, double eta_s);

class ProgressDisplay {
public:
    // On a terminal it ends its redrawn line before the logger writes one of its own.
    explicit ProgressDisplay(ProgressOptions options);
    ~ProgressDisplay();
    ProgressDisplay(const ProgressDisplay&) = delete;
    ProgressDisplay& operator=(const ProgressDisplay&) = delete;
    void show(const Row& row);
    // Ends the display: the last row when lines mode has not printed it, the newline on a terminal.
    void end();

private:
    using Clock = std::chrono::steady_clock;
    double eta_seconds(const Row& row);
    ProgressOptions options_;
    std::optional<Clock::time_point> last_printed_;
    std::optional<std::pair<double, Clock::time_point>> first_epoch_;  // this attempt's first row
    std::string pending_;    // lines mode: the newest row's text, not printed yet
    std::atomic<bool> line_open_{false};  // tty mode: a redrawn line without its newline (the
                                          // logger may end it from another thread)
};

}  // namespace trainrt::metrics
