// `trainrt results RUN_DIR [--json|--csv]`: what a run directory says about its run (Ray's
// Result) for a user on a login node: a short summary, one JSON object, or the metrics table as
// CSV. The exit code is the run's status (kHelp below).
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <system_error>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/results_report.hpp"
#include "cli/results_text.hpp"
#include "cli/sweep_results.hpp"
#include "cli/tracking_export.hpp"
#include "metrics/rows_file.hpp"
#include "runlog/run_files.hpp"
#include "trainrt/error.hpp"

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace trainrt::cli {
namespace {

constexpr const char* kUsage =
    "usage: trainrt results RUN_DIR|SWEEP_DIR [--json | --csv | --export mlflow=URI|tensorboard=DIR [--experiment NAME]]";
constexpr const char* kWhatToDo = "pass a run directory, <run.storage_path>/<run.name>";

constexpr const char* kHelp = R"help(What a run directory says about its run, from the directory's own files (a copy elsewhere works;
so does a directory the job is still appending to: a torn last line is skipped). Without a flag:
a summary of about a dozen lines.

Status: the last start, stop, failure or finish record of events.jsonl decides (requeue and
relaunch records only annotate the stop or failure before them):
  finished  a finish record
  failed    a failure record: final (gave up: more failures than [failure] max_failures), or not
            final with no later start (the job ended, or its wrapper is relaunching the step)
  stopped   a stop record (maybe followed by a requeue): run or submit the same run to resume
  running   a start record with nothing after it, or no record yet; a job killed without a
            record (SIGKILL, node failure) looks running until the next start records it
Times: total_time_s sums, over the attempts (a start record up to the next start), the time from
the attempt's process launch (the start record's `launched`) to its last own record (checkpoint,
stop, finish, a rank's failure) or last row (result.jsonl or result.superseded.jsonl), whichever
is later; an attempt relaunched in the same allocation (same job and restart) counts up to the
next launch: the time lost to the failure. useful_time_s sums _time_this_iter_s over
result.jsonl (rows of work lost to a crash moved to result.superseded.jsonl at the resume, so they
do not count).
Goodput: the share of the attempts' rank-time (seconds x world size) spent in kept iterations,
from the restore on, less the checkpoint stalls inside them; the rest by cause, in rank-seconds
(goodput.lost_rank_s in --json): start_up (launch to start record), restore, checkpoint_stall,
lost_work (iterations done again after a failure), detection (a failed attempt's last row to its
failure record), relaunch (to the next launch), stop (last row to the stop, less its checkpoint),
other (set-up before the first iteration, work outside report()). Time queued between
allocations (a requeue) is wall time, not charged: between_allocations_s.
Recoveries: for each failed attempt another followed, the way back by phase: detection_s (its
last row to its failure record), relaunch_s (to the next process launch), start_up_s, restore_s,
first_iteration_s, and training_again_s (last row to the next attempt's first row).
Best checkpoints: by run.json's checkpoint.score_attribute and score_order (max|min), best
first, those without the score last; without a score_attribute, newest first (score null).

The run's own exit code (docs/reference/exit-codes.md) is shown with its status ("failed (exit 7)") and
as exit_code in --json: 0 finished, 9 stopped, the failure's own code, 10 after giving up.

Export (--export): the run's result rows, config and checkpoint paths to an experiment tracker,
MLflow (mlflow=TRACKING_URI: file:/path/mlruns, sqlite:///path.db, http://host:5000; the run in
experiment --experiment, default the run's name; metrics at step _training_iteration, parameters
the run's config, tags trainrt.run_dir, trainrt.status, trainrt.checkpoint.latest and .best) or
TensorBoard (tensorboard=DIR: scalars under DIR/<run name>, or DIR/<experiment>/<run name> with
--experiment; the config as text). Only rows the
destination lacks are sent: the run directory's tracking.json remembers the tracker's run and the
last iteration sent, so exporting again after a requeue continues the same MLflow run with each
iteration once. A sweep's directory: each trial a run, the experiment the sweep's name (MLflow's
experiment; TensorBoard: DIR/<sweep>/<trial>). The same export runs when a job step ends with [tracking] set. Needs
the tracker's Python package (mlflow or tensorboardX) in trainrt's Python.

A sweep's directory (`trainrt tune`: sweep.json) gives one row per trial (status, attempts,
iterations, the last and best tune.metric, time, its values) and the best trial with its best
checkpoint; --json one object, --csv one line per trial; the exit code: running while a trial
runs, stopped while one is pending, else finished.

This command's exit code is the run's status, from its own table (never a training code; the
same with --json and --csv; `trainrt --exit-codes` prints it):
  0 finished, 20 running, 21 stopped, 22 failed,
  2 RUN_DIR missing, not a directory or not a trainrt run (no run.json, events.jsonl or
    result.jsonl), or bad options; 5 a file of the run cannot be read.
)help";

enum class Form { summary, json, csv };

struct Request {
    std::string run_dir;
    Form form = Form::summary;
    std::optional<TrackingTarget> export_to;
    bool help = false;
};

po::options_description visible_options() {
    po::options_description options("Options");
    options.add_options()("json", "one JSON object: status, status_detail, path, workload, world_size, rows, "
                                  "iterations, metrics (the last row), latest_checkpoint, best_checkpoints, "
                                  "checkpoint_score, error, restarts, attempts, total_time_s, useful_time_s, warnings")(
        "csv", "the metrics table: a header and one line per row of result.jsonl (_ranks.<metric>.<stat> "
               "as <metric>/<stat>)")(
        "export", po::value<std::string>(), "mlflow=TRACKING_URI or tensorboard=LOG_DIR: send the run's rows there")(
        "experiment", po::value<std::string>(), "with --export: the MLflow experiment, or TensorBoard's DIR/NAME/<run>")("help,h", "this text");
    return options;
}

Request parse(int argc, const char* const argv[]) {
    po::options_description all = visible_options();
    all.add_options()("run-dir", po::value<std::string>());
    po::positional_options_description positional;
    positional.add("run-dir", 1);
    po::variables_map given;
    try {
        const auto style = po::command_line_style::unix_style ^ po::command_line_style::allow_guessing;
        po::store(po::command_line_parser(argc, argv).options(all).positional(positional).style(style).run(),
                  given);
    } catch (const po::error& error) {
        throw ConfigError(fmt::format("results: {}; {}", error.what(), kUsage));
    }
    Request request;
    request.help = given.count("help") > 0;
    if (given.count("json") && given.count("csv")) throw ConfigError(fmt::format("results: --json and --csv together; {}", kUsage));
    request.form = given.count("json") ? Form::json : given.count("csv") ? Form::csv : Form::summary;
    if (given.count("export")) {
        if (request.form != Form::summary) throw ConfigError(fmt::format("results: --export with --json or --csv; {}", kUsage));
        request.export_to = parse_export_target(given["export"].as<std::string>());
        if (given.count("experiment")) request.export_to->experiment = given["experiment"].as<std::string>();
    } else if (given.count("experiment")) {
        throw ConfigError(fmt::format("results: --experiment without --export; {}", kUsage));
    }
    if (!request.help && !given.count("run-dir")) throw ConfigError(fmt::format("results: RUN_DIR missing; {}", kUsage));
    if (given.count("run-dir")) request.run_dir = given["run-dir"].as<std::string>();
    return request;
}

// ConfigError unless `dir` is a directory holding run.json, events.jsonl or result.jsonl.
void check_run_dir(const std::string& dir) {
    std::error_code error;
    const fs::file_status status = fs::status(dir, error);
    if (status.type() == fs::file_type::not_found)
        throw ConfigError(fmt::format("results: no such directory: {}; {}", dir, kWhatToDo));
    if (error) throw ConfigError(fmt::format("results: cannot access {}: {}; {}", dir, error.message(), kWhatToDo));
    if (!fs::is_directory(status))
        throw ConfigError(fmt::format("results: not a directory: {}; {}", dir, kWhatToDo));
    for (const char* file : {runlog::kRunJson, runlog::kEvents, runlog::kResults})
        if (fs::exists(fs::path(dir) / file, error)) return;
    throw ConfigError(fmt::format("results: not a trainrt run (no run.json, events.jsonl or result.jsonl): {}; {}",
                                  dir, kWhatToDo));
}

int report_sweep(const Request& request) {
    const nlohmann::ordered_json sweep = build_sweep_report(request.run_dir);
    if (request.form == Form::json) std::cout << sweep.dump(2) << "\n";
    if (request.form == Form::csv) std::cout << sweep_csv(sweep);
    if (request.form == Form::summary) std::cout << sweep_summary(sweep);
    std::cout.flush();
    return sweep_exit_code(sweep);
}

// One run to `target`; a tracker's failure is this command's bad destination (exit 2).
void export_one(const std::string& run_dir, const TrackingTarget& target) {
    try {
        const ExportOutcome outcome = export_run(run_dir, target);
        std::cout << fmt::format("{}: {} rows to {} {} ({}), up to iteration {}\n", run_dir, outcome.points,
                                 tracker_name(target.kind), target.where, outcome.run_id, outcome.last_iteration);
    } catch (const WorkloadError& error) {
        throw ConfigError(fmt::format("results: --export {}={}: {}; check the destination", tracker_name(target.kind),
                                      target.where, error.what()));
    }
}

int export_sweep(const Request& request) {
    const nlohmann::ordered_json sweep = build_sweep_report(request.run_dir);
    const std::string name = fs::path(sweep["path"].get<std::string>()).filename().string();
    for (const auto& trial : sweep["trials"]) {
        const std::string run_dir = trial_run_dir(request.run_dir, trial["name"].get<std::string>());
        if (!fs::exists(runlog::path_in(run_dir, runlog::kResults))) continue;  // never started
        TrackingTarget target = *request.export_to;
        if (target.experiment.empty()) target.experiment = name;
        if (target.kind == TrackerKind::tensorboard)
            target.where = tensorboard_run_dir(target.where, target.experiment, trial["name"].get<std::string>());
        export_one(run_dir, target);
    }
    return sweep_exit_code(sweep);
}

int export_single(const Request& request) {
    check_run_dir(request.run_dir);
    TrackingTarget target = *request.export_to;
    const nlohmann::ordered_json summary = build_report(request.run_dir);
    if (target.kind == TrackerKind::tensorboard)
        target.where = tensorboard_run_dir(target.where, target.experiment,
                                           fs::path(summary["path"].get<std::string>()).filename().string());
    export_one(request.run_dir, target);
    return results_exit_code(summary);
}

int report(const Request& request) {
    if (request.export_to) return is_sweep_dir(request.run_dir) ? export_sweep(request) : export_single(request);
    if (is_sweep_dir(request.run_dir)) return report_sweep(request);
    check_run_dir(request.run_dir);
    const nlohmann::ordered_json summary = build_report(request.run_dir);
    if (request.form == Form::json) std::cout << summary.dump(2) << "\n";
    if (request.form == Form::csv)
        std::cout << metrics_csv(metrics::read_rows(runlog::path_in(summary["path"].get<std::string>(), runlog::kResults)).rows);
    if (request.form == Form::summary) std::cout << human_summary(summary);
    std::cout.flush();
    return results_exit_code(summary);
}

}  // namespace

int results_command(int argc, const char* const argv[]) {
    const Request request = parse(argc, argv);
    if (request.help) {
        std::cout << kUsage << "\n\n" << kHelp << "\n" << visible_options();
        return 0;
    }
    try {
        return report(request);
    } catch (const fs::filesystem_error& error) {
        throw StorageError(fmt::format("results: {}; check the run directory's permissions", error.what()));
    }
}

}  // namespace trainrt::cli
