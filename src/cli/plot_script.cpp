#include "cli/plot_script.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

namespace trainrt::cli::plot {
namespace {

constexpr const char* kRestartColor = "#c0392b";
constexpr std::size_t kLongestReason = 60;  // bytes of a restart's reason shown in its label
constexpr std::size_t kLongestTitle = 26;   // bytes of a series' name shown in the key
constexpr double kLeftPixels = 90;          // y tics and label
constexpr double kKeyPixels = 250;          // the key, right of the plots

struct Panel {
    std::string title;
    std::string ylabel;
    std::vector<std::string> items;  // gnuplot plot items
};

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}

// `text` cut to `limit` bytes, not inside a UTF-8 sequence.
std::string shortened(const std::string& text, std::size_t limit) {
    if (text.size() <= limit) return text;
    std::size_t cut = limit;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return text.substr(0, cut) + "...";
}

// The row's own metrics (rank 0's values, as in result.jsonl) whose name contains `part` and
// not `unless`; the `_ranks` summaries are left to `trainrt results`.
std::vector<std::string> metric_columns(const Table& table, const std::string& part, const std::string& unless) {
    std::vector<std::string> names;
    for (const std::string& name : table.columns) {
        const std::string low = lower(name);
        if (low.find(part) == std::string::npos || (!unless.empty() && low.find(unless) != std::string::npos))
            continue;
        if (table.rank_summaries.count(name) == 0 && name != kRank0StepColumn) names.push_back(name);
    }
    return names;
}

// Points only while there are few enough to tell apart.
std::string line_style(const Table& table) {
    return table.iterations.size() <= 60 ? "with linespoints pt 7 ps 0.6 lw 2" : "with lines lw 2";
}

std::string item(int column, const std::string& title, const std::string& style) {
    return fmt::format("rows using 1:{} {} title {}", column, style, quoted(shortened(title, kLongestTitle)));
}

Panel metric_panel(const Table& table, const std::string& title, const std::vector<std::string>& names) {
    Panel panel{title, title, {}};
    for (const std::string& name : names)
        panel.items.push_back(item(table.column_number(name), name, line_style(table)));
    return panel;
}

// The spread of `_time_this_iter_s` over ranks (band min..max, mean line), the slowest rank's
// compute time, and rank 0's step time for rows without `_ranks`.
Panel step_panel(const Table& table) {
    Panel panel{"step time across ranks", "seconds per iteration", {}};
    const int low = table.column_number("_time_this_iter_s/min"), mean = table.column_number("_time_this_iter_s/mean"),
              high = table.column_number("_time_this_iter_s/max"), compute = table.column_number("_time_compute_s/max"),
              rank0 = table.column_number(kRank0StepColumn);
    if (low != 0 && high != 0)
        panel.items.push_back(fmt::format("rows using 1:{}:{} with filledcurves fs transparent solid 0.3 noborder "
                                          "lc rgb '#5dade2' title 'min..max over ranks'", low, high));
    if (mean != 0) panel.items.push_back(item(mean, "mean over ranks", line_style(table) + " lc rgb '#1f618d'"));
    if (compute != 0)
        panel.items.push_back(item(compute, "compute, slowest rank", "with lines lw 1.5 dt 2 lc rgb '#d35400'"));
    if (rank0 != 0)
        panel.items.push_back(item(rank0, low != 0 ? "rank 0 (no _ranks)" : "rank 0",
                                   line_style(table) + " lc rgb '#117a65'"));
    return panel;
}

std::vector<Panel> panels(const Table& table) {
    std::vector<Panel> all{metric_panel(table, "loss", metric_columns(table, "loss", "")),
                           metric_panel(table, "accuracy", metric_columns(table, "acc", "loss")), step_panel(table)};
    all.erase(std::remove_if(all.begin(), all.end(), [](const Panel& p) { return p.items.empty(); }), all.end());
    return all;
}

// Where the plots sit across the image (screen fractions): room on the left for the y tics and
// label, on the right for the key.
struct Frame {
    double left = 0;
    double right = 1;
    double low = 0;   // x range
    double high = 1;
};

Frame frame_of(const Figure& figure) {
    Frame frame{std::min(0.2, kLeftPixels / figure.width), std::max(0.5, 1 - kKeyPixels / figure.width)};
    auto [low, high] = std::minmax_element(figure.table.iterations.begin(), figure.table.iterations.end());
    frame.low = *high > *low ? *low : *low - 1;
    frame.high = *high > *low ? *high : *high + 1;
    return frame;
}

// The label beside the line, on the side with more room, cut to fit there; stepped down so the
// labels of nearby restarts do not cover each other.
std::string restart_label(const Figure& figure, const Frame& frame, const RestartMark& mark, int tag) {
    constexpr double char_pixels = 6.5;  // at 9 pt
    const double plot_pixels = (frame.right - frame.left) * figure.width;
    const double at = (mark.iteration - frame.low) / (frame.high - frame.low);
    const bool on_left = at > 0.5;
    const double room = (on_left ? at : 1 - at) * plot_pixels - 12;
    const std::string text = fmt::format("restart {}{}", mark.number, mark.reason.empty() ? "" : ": " + mark.reason);
    const std::size_t fits = static_cast<std::size_t>(std::max(12.0, room / char_pixels)) - 3;
    return fmt::format("set label {} {} at {:.17g}, graph {:.2f} {} offset {},0 boxed tc rgb '{}' font ',9' front\n",
                       tag, quoted(shortened(text, std::min(fits, kLongestReason))), mark.iteration,
                       0.92 - 0.1 * ((tag - 1) % 4), on_left ? "right" : "left", on_left ? "-0.7" : "0.7",
                       kRestartColor);
}

// Dashed lines (arrows stay set for every panel) and their labels (unset after the first panel).
std::string restart_lines(const Figure& figure, const Frame& frame) {
    std::string text = "set style textbox opaque noborder\n";
    int tag = 1;
    for (const RestartMark& mark : figure.restarts) {
        text += fmt::format("set arrow {} from {:.17g}, graph 0 to {:.17g}, graph 1 nohead dt 2 lw 1.5 lc rgb '{}' front\n",
                            tag, mark.iteration, mark.iteration, kRestartColor);
        text += restart_label(figure, frame, mark, tag++);
    }
    return text;
}

std::string x_axis(const Frame& frame) {
    std::string text = fmt::format("set xrange [{:.17g}:{:.17g}]\n", frame.low, frame.high);
    if (frame.high - frame.low <= 10) text += "set xtics 1\n";  // no fractional iterations on short runs
    return text;
}

std::string header(const Figure& figure, std::size_t panel_count) {
    const Frame frame = frame_of(figure);
    return fmt::format(
        "# Written by `trainrt plot`. A kept copy reruns as: cd DIR && gnuplot {} (writes plot.png)\n"
        "if (!exists('datadir')) datadir = '.'\n"
        "if (!exists('outfile')) outfile = 'plot.png'\n"
        "rows = datadir.'/{}'\n"
        "set terminal pngcairo size {},{} noenhanced font 'Sans,10'\n"
        "set output outfile\n"
        "set datafile missing 'NaN'\n"
        "set lmargin at screen {:.3f}\n"
        "set rmargin at screen {:.3f}\n"
        "set key at screen {:.3f}, graph 1 left top Left reverse samplen 2\n"
        "set grid\n{}{}"
        "set multiplot layout {},1 title {} font ',13'\n",
        kScriptFile, kDataFile, figure.width, figure.height, frame.left, frame.right, frame.right + 0.01,
        x_axis(frame), restart_lines(figure, frame), panel_count, quoted(figure.title));
}

std::string panel_text(const Panel& panel, bool last) {
    std::string text = fmt::format("# panel: {}\nset title {}\nset ylabel {}\n", panel.title, quoted(panel.title),
                                   quoted(panel.ylabel));
    if (last) text += "set xlabel '_training_iteration'\n";
    text += "plot ";
    for (std::size_t i = 0; i < panel.items.size(); ++i) text += (i == 0 ? "" : ", \\\n     ") + panel.items[i];
    return text + "\nunset label\n";
}

std::string cell_text(const std::optional<double>& cell) {
    return cell && std::isfinite(*cell) ? fmt::format("{:.17g}", *cell) : "NaN";
}

}  // namespace

std::string quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'') out += "''";
        else out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c;
    }
    return out + "'";
}

std::string data_text(const Table& table) {
    std::string text = "# _training_iteration";
    for (const std::string& name : table.columns) text += " | " + name;
    text += "\n";
    for (std::size_t row = 0; row < table.iterations.size(); ++row) {
        text += fmt::format("{:.17g}", table.iterations[row]);
        for (const auto& cell : table.cells[row]) text += " " + cell_text(cell);
        text += "\n";
    }
    return text;
}

std::string gnuplot_script(const Figure& figure) {
    const std::vector<Panel> all = panels(figure.table);
    if (all.empty() || figure.table.iterations.empty()) return "";
    std::string text = header(figure, all.size());
    for (std::size_t i = 0; i < all.size(); ++i) text += panel_text(all[i], i + 1 == all.size());
    return text + "unset multiplot\nset output\n";
}

}  // namespace trainrt::cli::plot
