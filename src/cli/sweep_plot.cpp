#include "cli/sweep_plot.hpp"

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "cli/plot_script.hpp"
#include "metrics/best_trial.hpp"
#include "metrics/metric_series.hpp"
#include "runlog/sweep_record.hpp"
#include "trainrt/error.hpp"

namespace trainrt::cli::plot {
namespace {

constexpr std::size_t kLabelledTrials = 24;  // more trials than this: only the best is in the key
const char* const kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"};

// (time attribute, metric) of every row that reported the metric; `epochs` says whether each had an epoch.
std::vector<std::pair<double, double>> trial_points(const std::string& run_dir, const std::string& metric, bool& epochs) {
    std::vector<std::pair<double, double>> points;
    for (const metrics::MetricPoint& point : metrics::metric_series(run_dir, metric)) {
        epochs = epochs && point.epoch.has_value();
        const std::optional<double> x = point.epoch ? point.epoch : point.iteration;
        if (x) points.emplace_back(*x, point.value);
    }
    return points;
}

// A value as the key shows it: a number to 4 significant digits, anything else as it is.
std::string short_value(const std::string& value) {
    char* end = nullptr;
    const double number = std::strtod(value.c_str(), &end);
    return end != value.c_str() && *end == '\0' ? fmt::format("{:.4g}", number) : value;
}

std::string trial_label(const runlog::TrialRecord& trial) {
    std::string text = trial.name;
    for (const auto& [key, value] : trial.values)
        text += fmt::format(" {}={}", key.substr(key.find('.') + 1), short_value(value));
    return text;
}

}  // namespace

SweepFigure build_sweep_figure(const std::string& sweep_dir, int width, int height) {
    const runlog::SweepState state = runlog::load_state(sweep_dir);
    SweepFigure figure{"", state.metric, "epoch", width, height, {}};
    bool epochs = true;
    for (const runlog::TrialRecord& trial : state.trials) {
        TrialSeries series{trial.name, trial_label(trial), TrialLook::other,
                           trial_points(sweep_dir + "/" + trial.name, figure.metric, epochs)};
        if (series.points.empty()) continue;
        if (trial.status == runlog::TrialStatus::error) series.look = TrialLook::error;
        else if (runlog::stopped_early(state, trial)) series.look = TrialLook::stopped_early;
        figure.trials.push_back(std::move(series));
    }
    const auto best = metrics::best_trial(sweep_dir, state, figure.metric, state.mode, metrics::Scope::all);
    if (figure.trials.empty() || !best)
        throw ConfigError(fmt::format("plot: no trial in {} has reported {} yet; plot again after the first report",
                                      sweep_dir, figure.metric));
    const std::string& best_name = state.trials[best->index].name;
    for (TrialSeries& series : figure.trials)
        if (series.name == best_name) series.look = TrialLook::best;
    if (!epochs) figure.x_label = "_training_iteration";
    std::filesystem::path dir = std::filesystem::absolute(sweep_dir).lexically_normal();
    if (dir.filename().empty()) dir = dir.parent_path();
    figure.title = fmt::format("{}: {} trials, {} ({}); best {}", dir.filename().string(), state.trials.size(),
                               figure.metric, state.mode, best_name);
    return figure;
}

std::string sweep_data_text(const SweepFigure& figure) {
    std::string text = fmt::format("# {} | {}, one block per trial\n", figure.x_label, figure.metric);
    for (const TrialSeries& trial : figure.trials) {
        text += fmt::format("# {}\n", trial.name);
        for (const auto& [x, y] : trial.points) text += fmt::format("{:.17g} {:.17g}\n", x, y);
        text += "\n\n";
    }
    return text;
}

std::string sweep_script(const SweepFigure& figure) {
    std::string text = fmt::format(
        "# Written by `trainrt plot` for a sweep. A kept copy reruns as: cd DIR && gnuplot {} (writes plot.png)\n"
        "if (!exists('datadir')) datadir = '.'\n"
        "if (!exists('outfile')) outfile = 'plot.png'\n"
        "rows = datadir.'/{}'\n"
        "set terminal pngcairo size {},{} noenhanced font 'Sans,10'\n"
        "set output outfile\n"
        "set key outside right top Left reverse samplen 2 font ',8'\n"
        "set grid\nset offsets graph 0.02, graph 0.02, graph 0.02, graph 0.02\n"
        "set title {} font ',13'\nset xlabel {}\nset ylabel {}\nplot ",
        kScriptFile, kDataFile, figure.width, figure.height, quoted(figure.title), quoted(figure.x_label),
        quoted(figure.metric));
    const bool key_for_all = figure.trials.size() <= kLabelledTrials;
    std::vector<std::string> items;
    std::string best_item;  // drawn last: on top
    for (std::size_t i = 0; i < figure.trials.size(); ++i) {
        const TrialSeries& trial = figure.trials[i];
        const std::string colour = trial.look == TrialLook::best    ? "#c0392b"
                                   : trial.look == TrialLook::other ? kColours[i % std::size(kColours)]
                                                                    : "#b0b0b0";
        const std::string style = trial.look == TrialLook::best ? "lw 3" : trial.look == TrialLook::error ? "lw 1 dt 2" : "lw 1.5";
        const std::string suffix = trial.look == TrialLook::stopped_early ? " (stopped early)"
                                   : trial.look == TrialLook::error      ? " (ERROR)"
                                   : trial.look == TrialLook::best       ? " (best)"
                                                                         : "";
        const std::string title = key_for_all || trial.look == TrialLook::best ? "title " + quoted(trial.label + suffix) : "notitle";
        const std::string item = fmt::format("rows index {} using 1:2 with linespoints pt 7 ps 0.5 {} lc rgb '{}' {}", i,
                                             style, colour, title);
        if (trial.look == TrialLook::best) best_item = item;
        else items.push_back(item);
    }
    items.push_back(best_item);
    for (std::size_t i = 0; i < items.size(); ++i) text += (i == 0 ? "" : ", \\\n     ") + items[i];
    return text + "\nset output\n";
}

}  // namespace trainrt::cli::plot
