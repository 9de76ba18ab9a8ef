// `trainrt plot RUN_DIR -o FILE.png`: a run's curves as a PNG, drawn by gnuplot. plot_data.hpp
// decides what is drawn, plot_script.hpp writes gnuplot's input; this file checks the inputs,
// runs gnuplot (no shell) on files in a private temporary directory and renames its PNG into
// place, so a failed plot leaves neither a PNG nor temporary files behind.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/plot_script.hpp"
#include "cli/sweep_plot.hpp"
#include "cli/sweep_results.hpp"
#include "launch/process.hpp"
#include "metrics/rows_file.hpp"
#include "storage/posix.hpp"
#include "runlog/run_files.hpp"
#include "trainrt/error.hpp"

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace trainrt::cli {
namespace {

constexpr double kGnuplotTimeout = 60;  // seconds; a plot of a long run takes well under one
const char* const kUsage = "usage: trainrt plot RUN_DIR|SWEEP_DIR -o FILE.png [--size WIDTHxHEIGHT] [--keep-script DIR]";

const char* const kHelp = R"(
Draws a run's result.jsonl as a PNG with gnuplot (install gnuplot; Debian: gnuplot-nox).
x is _training_iteration; panels, top to bottom:
  loss       every numeric column whose name contains "loss" (any case): rank 0's values
  accuracy   every numeric column whose name contains "acc" (left out when there is none)
  step time  the spread over ranks of each row's _ranks: a band _time_this_iter_s/min..max,
             its mean, and _time_compute_s/max (the slowest rank's compute time); for rows
             without _ranks, rank 0's _time_this_iter_s
String values (tags such as "phase") are skipped; a column that appears later in the run is
empty in the rows before it. Works on a run still in progress: plots the rows written so far.

Restarts: a dashed line at the first iteration of every attempt after the first, labelled
"restart N: REASON", N counting launches and REASON from that launch's `start` event in
events.jsonl. Every launch writes a start event, a rerun of the same run name outside Slurm
too (where restart_count stays 0): a row belongs to the attempt of the last start event whose
time is not after the row's _timestamp. A rise of restart_count (SLURM_RESTART_COUNT) between
consecutive rows marks an attempt as well.

A sweep's directory (`trainrt tune`'s, with sweep.json): one line per trial, its tune.metric
against its epoch (_training_iteration for rows without one); the best trial thick and red,
trials ASHA stopped early grey, ERROR trials grey and dashed; the key names each trial's values
(only the best's beyond 24 trials).

The PNG is written to FILE.png.tmp-XXXXXX beside FILE.png and renamed when complete.

options:
  -o, --output FILE.png     the PNG to write (required)
  --size WIDTHxHEIGHT       its size in pixels (default 1200x900)
  --keep-script DIR         also write gnuplot's input (plot.gp, rows.dat) to DIR, to debug or
                            restyle; `cd DIR && gnuplot plot.gp` redraws it as plot.png
  -h, --help                this text
)";

[[noreturn]] void bad(const std::string& message) { throw ConfigError("plot: " + message); }

struct Options {
    std::string run_dir;
    std::string output;
    std::string keep_dir;  // empty: keep nothing
    int width = 1200;
    int height = 900;
};

void parse_size(const std::string& text, Options& options) {
    static const std::regex format(R"((\d{2,5})x(\d{2,5}))");
    std::smatch match;
    if (!std::regex_match(text, match, format))
        bad(fmt::format("--size {} is not WIDTHxHEIGHT, give pixels such as 1200x900", text));
    options.width = std::stoi(match[1].str());
    options.height = std::stoi(match[2].str());
    if (options.width < 200 || options.height < 200)
        bad(fmt::format("--size {} is too small to read, give at least 200x200", text));
}

po::options_description option_list() {
    po::options_description desc("trainrt plot");
    desc.add_options()("help,h", "")("output,o", po::value<std::string>(), "")(
        "size", po::value<std::string>(), "")("keep-script", po::value<std::string>(), "")(
        "run-dir", po::value<std::vector<std::string>>(), "");
    return desc;
}

// Nullopt when --help was asked for.
std::optional<Options> parse(int argc, const char* const argv[]) {
    po::variables_map values;
    try {
        po::positional_options_description positional;
        positional.add("run-dir", -1);
        po::store(po::command_line_parser(argc, argv).options(option_list()).positional(positional).run(), values);
    } catch (const po::error& error) {
        bad(fmt::format("{}; {}", error.what(), kUsage));
    }
    if (values.count("help")) return std::nullopt;
    Options options;
    const auto dirs = values.count("run-dir") ? values["run-dir"].as<std::vector<std::string>>()
                                              : std::vector<std::string>{};
    if (dirs.size() != 1) bad(fmt::format("give exactly one RUN_DIR (got {}); {}", dirs.size(), kUsage));
    if (!values.count("output")) bad(fmt::format("no -o FILE.png given, name the PNG to write; {}", kUsage));
    options.run_dir = dirs[0];
    options.output = values["output"].as<std::string>();
    if (values.count("keep-script")) options.keep_dir = values["keep-script"].as<std::string>();
    if (values.count("size")) parse_size(values["size"].as<std::string>(), options);
    return options;
}

// The run's rows; bad input (no run, no rows) is a ConfigError.
std::vector<metrics::Row> run_rows(const std::string& run_dir) {
    if (!fs::is_directory(run_dir))
        bad(fmt::format("no run directory {}, give RUN_DIR = <run.storage_path>/<run.name>", run_dir));
    const std::string results = runlog::path_in(run_dir, runlog::kResults);
    if (!fs::exists(runlog::path_in(run_dir, runlog::kRunJson)) && !fs::exists(results))
        bad(fmt::format("not a trainrt run (no run.json, no result.jsonl) in {}, give a run's directory", run_dir));
    std::vector<metrics::Row> rows = metrics::read_rows(results).rows;
    const bool any = std::any_of(rows.begin(), rows.end(),
                                 [](const metrics::Row& row) { return row.contains("_training_iteration"); });
    if (!any) bad(fmt::format("no result rows yet in {}, plot again after the run's first report", results));
    return rows;
}

// "plugin:/a/b/libx.so:name" -> "plugin:libx.so:name"; other workloads unchanged.
std::string short_workload(const std::string& workload) {
    if (workload.rfind("plugin:", 0) != 0) return workload;
    const std::string rest = workload.substr(7);
    const auto slash = rest.rfind('/');
    return "plugin:" + (slash == std::string::npos ? rest : rest.substr(slash + 1));
}

// The text of run.json's `key` (a string as is, anything else as JSON); "" when absent.
std::string run_field(const nlohmann::json& run, const char* key) {
    if (!run.is_object() || !run.contains(key)) return "";
    return run[key].is_string() ? run[key].get<std::string>() : run[key].dump();
}

// "<run name>: workload W, world size N, R reports"; what run.json lacks comes from the rows.
std::string run_title(const std::string& run_dir, const std::vector<metrics::Row>& rows) {
    std::ifstream in(runlog::path_in(run_dir, runlog::kRunJson));
    const auto run = nlohmann::json::parse(in, nullptr, false);
    std::string workload = run_field(run, "workload"), world = run_field(run, "world_size");
    if (world.empty() && rows.back().contains("world_size")) world = rows.back()["world_size"].dump();
    fs::path dir = fs::absolute(run_dir).lexically_normal();
    if (dir.filename().empty()) dir = dir.parent_path();  // "runs/name/"
    return fmt::format("{}: workload {}, world size {}, {} reports", dir.filename().string(),
                       workload.empty() ? "?" : short_workload(workload), world.empty() ? "?" : world, rows.size());
}

// Owns a directory made by mkdtemp under $TMPDIR (or /tmp) and removes it with its files.
class TempDir {
public:
    TempDir() {
        std::string pattern = (fs::temp_directory_path() / "trainrt-plot.XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr)
            bad(fmt::format("cannot make a temporary directory ({}), in {}, set TMPDIR to a writable directory",
                            std::strerror(errno), pattern));
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// FILE.png.tmp-XXXXXX beside the output (same file system, so the final rename is atomic), with
// the mode a new file gets; removed on destruction unless it was renamed into place.
class PendingPng {
public:
    explicit PendingPng(const std::string& output) : output_(output), path_(output + ".tmp-XXXXXX") {
        const std::string dir = fs::path(output).parent_path().empty() ? "." : fs::path(output).parent_path().string();
        if (!fs::is_directory(dir))
            bad(fmt::format("the output directory {} does not exist, create it or give another -o", dir));
        if (fs::is_directory(output)) bad(fmt::format("-o {} is a directory, name a .png file in it", output));
        const int fd = ::mkstemp(path_.data());
        if (fd < 0)
            bad(fmt::format("cannot write in the output directory {} ({}), give -o in a writable directory", dir,
                            std::strerror(errno)));
        const mode_t mask = ::umask(0);
        ::umask(mask);
        ::fchmod(fd, 0666 & ~mask);
        ::close(fd);
    }
    ~PendingPng() {
        if (!committed_) ::unlink(path_.c_str());
    }
    PendingPng(const PendingPng&) = delete;
    PendingPng& operator=(const PendingPng&) = delete;
    const std::string& path() const { return path_; }
    void commit() {
        std::error_code error;
        if (fs::file_size(path_, error) == 0 || error) bad(fmt::format("gnuplot wrote no image to {}", path_));
        if (::rename(path_.c_str(), output_.c_str()) != 0)
            throw StorageError(fmt::format("cannot rename {} to {}: {}", path_, output_, std::strerror(errno)));
        committed_ = true;
    }

private:
    std::string output_;
    std::string path_;
    bool committed_ = false;
};

void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw StorageError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
}

// The line of gnuplot's output that says what went wrong: its `"FILE" line N: ...` message, or
// else its first line.
std::string gnuplot_message(const std::string& output) {
    static const std::regex located(R"(line \d+: )");
    std::istringstream lines(output);
    std::string line, first;
    while (std::getline(lines, line)) {
        if (line.find_first_not_of(" \t^") == std::string::npos) continue;
        if (first.empty()) first = line;
        if (std::regex_search(line, located) && line.find("warning:") == std::string::npos) return line;
    }
    return first.empty() ? "(no output)" : first;
}

// gnuplot (from PATH, no shell) on the script, drawing into `png`.
void run_gnuplot(const std::string& dir, const std::string& png) {
    const std::string settings = fmt::format("datadir = {}; outfile = {}", plot::quoted(dir), plot::quoted(png));
    const launch::ProgramResult result =
        launch::run_program({"gnuplot", "-e", settings, dir + "/" + plot::kScriptFile}, kGnuplotTimeout);
    if (!result.started)
        bad(fmt::format("gnuplot is not on PATH ({}), install gnuplot (Debian: gnuplot-nox)", result.output));
    if (result.exit_code != 0)
        bad(fmt::format("gnuplot failed (exit {}): {}; --keep-script DIR keeps its input to look at",
                        result.exit_code, gnuplot_message(result.output)));
}

// gnuplot on `script` and `data` in a private directory (and a kept copy), the PNG renamed into place.
void render(const Options& options, const std::string& script, const std::string& data) {
    PendingPng png(options.output);
    TempDir work;
    write_text(work.path() + "/" + plot::kScriptFile, script);
    write_text(work.path() + "/" + plot::kDataFile, data);
    if (!options.keep_dir.empty()) {
        storage::make_dirs(options.keep_dir);
        write_text(options.keep_dir + "/" + plot::kScriptFile, script);
        write_text(options.keep_dir + "/" + plot::kDataFile, data);
    }
    run_gnuplot(work.path(), png.path());
    png.commit();
}

int draw_sweep(const Options& options) {
    const plot::SweepFigure figure = plot::build_sweep_figure(options.run_dir, options.width, options.height);
    render(options, plot::sweep_script(figure), plot::sweep_data_text(figure));
    std::size_t grey = 0;
    std::string best;
    for (const plot::TrialSeries& trial : figure.trials) {
        grey += trial.look == plot::TrialLook::stopped_early || trial.look == plot::TrialLook::error;
        if (trial.look == plot::TrialLook::best) best = trial.name;
    }
    std::cout << fmt::format("wrote {}: {} trials with {} rows, {} stopped early or ERROR (grey), best {}\n",
                             options.output, figure.trials.size(), figure.metric, grey, best);
    return 0;
}

int draw(const Options& options) {
    if (is_sweep_dir(options.run_dir)) return draw_sweep(options);
    const std::vector<metrics::Row> rows = run_rows(options.run_dir);
    plot::Figure figure{run_title(options.run_dir, rows), options.width, options.height,
                        plot::build_table(rows),
                        plot::find_restarts(rows, runlog::fold(runlog::read_events(options.run_dir).events))};
    const std::string script = plot::gnuplot_script(figure);
    if (script.empty()) bad(fmt::format("nothing numeric to plot in {}", runlog::path_in(options.run_dir, runlog::kResults)));
    render(options, script, plot::data_text(figure.table));
    std::cout << fmt::format("wrote {}: {} rows, iterations {:g}..{:g}, {} restart(s)\n", options.output,
                             figure.table.iterations.size(), figure.table.iterations.front(),
                             figure.table.iterations.back(), figure.restarts.size());
    return 0;
}

}  // namespace

int plot_command(int argc, const char* const argv[]) {
    const std::optional<Options> options = parse(argc, argv);
    if (!options) {
        std::cout << kUsage << "\n" << kHelp;
        return 0;
    }
    return draw(*options);
}

}  // namespace trainrt::cli
