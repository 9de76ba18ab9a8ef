#pragma once
// The gnuplot input of `trainrt plot`: the data file (rows.dat) and the script (plot.gp).
// The script reads `datadir.'/rows.dat'` and writes `outfile`; both default so that a kept copy
// (--keep-script DIR) reruns as `cd DIR && gnuplot plot.gp` (writing plot.png).
#include <string>
#include <vector>

#include "cli/plot_data.hpp"

namespace trainrt::cli::plot {

inline constexpr const char* kDataFile = "rows.dat";
inline constexpr const char* kScriptFile = "plot.gp";

struct Figure {
    std::string title;
    int width = 1200;
    int height = 900;
    Table table;
    std::vector<RestartMark> restarts;
};

// One line per row: the iteration, then every column ("NaN" where a row has no number).
std::string data_text(const Table& table);

// Panels, top to bottom: columns named *loss* (case-insensitive), columns named *acc*, step
// time across ranks; a panel with nothing to draw is left out. Empty when no panel is left.
std::string gnuplot_script(const Figure& figure);

// `text` as a gnuplot single-quoted string (no escapes are processed inside; ' is doubled);
// control characters become spaces.
std::string quoted(const std::string& text);

}  // namespace trainrt::cli::plot
