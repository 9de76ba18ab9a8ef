#pragma once
// `trainrt plot SWEEP_DIR`: every trial's tune.metric against its epoch (the sweep's time
// attribute; `_training_iteration` for rows without an epoch), one line per trial: the best
// trial thick, trials ASHA stopped early and ERROR trials grey, the others in colour. What is
// drawn comes from sweep.json and each trial's result.jsonl; plot_command.cpp runs gnuplot.
#include <string>
#include <utility>
#include <vector>

namespace trainrt::cli::plot {

enum class TrialLook { best, other, stopped_early, error };

struct TrialSeries {
    std::string name;   // trial_0003
    std::string label;  // the key's text: its name and values
    TrialLook look = TrialLook::other;
    std::vector<std::pair<double, double>> points;  // (epoch, metric), in report order
};

struct SweepFigure {
    std::string title;
    std::string metric;
    std::string x_label;  // "epoch", or "_training_iteration" when no row has an epoch
    int width = 1200;
    int height = 900;
    std::vector<TrialSeries> trials;  // those with at least one point
};

// ConfigError of one line when no trial has reported the metric yet.
SweepFigure build_sweep_figure(const std::string& sweep_dir, int width, int height);

// One block per trial (gnuplot's `index`), blocks separated by two blank lines.
std::string sweep_data_text(const SweepFigure& figure);
std::string sweep_script(const SweepFigure& figure);

}  // namespace trainrt::cli::plot
