// trainrt._trainrt.layout: the run directory's layout as C++ owns it (runlog/run_files.hpp,
// checkpoint/format/catalog.hpp), so that the Python package spells no file name of a run directory.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <fstream>
#include <map>
#include <optional>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/manifest.hpp"
#include "checkpoint/read/verify.hpp"
#include "metrics/best_trial.hpp"
#include "metrics/ray_result.hpp"
#include "metrics/rows_file.hpp"
#include "python/module/bindings.hpp"
#include "runlog/events.hpp"
#include "runlog/history.hpp"
#include "runlog/run_dir.hpp"
#include "runlog/run_files.hpp"
#include "runlog/sweep_record.hpp"

namespace py = pybind11;

namespace trainrt::python {
namespace {

// [(checkpoint directory, its manifest's metrics as JSON text)] of the run's checkpoints whose
// manifest reads, oldest first. Whether one verifies is Checkpoint.open's to say.
// Each committed checkpoint with its metrics as Ray's Result.best_checkpoints gives them: the
// result row of its iteration with Ray's names; for one saved between reports (a stop's), the
// metrics its manifest holds and its training_iteration.
std::vector<std::pair<std::string, std::string>> checkpoints_with_metrics(const std::string& run_dir) {
    std::map<std::int64_t, metrics::Row> rows;
    for (metrics::Row& row : metrics::read_rows(runlog::path_in(run_dir, runlog::kResults)).rows)
        if (const std::optional<double> iteration = metrics::number_in(row, "_training_iteration"))
            rows[std::llround(*iteration)] = metrics::with_ray_names(std::move(row));
    std::vector<std::pair<std::string, std::string>> found;
    for (const std::string& name : checkpoint::committed_names(run_dir)) {
        const std::string dir = checkpoint::checkpoints_dir(run_dir) + "/" + name;
        checkpoint::Manifest manifest;
        if (!checkpoint::read_manifest_or_reason(dir, manifest).empty()) continue;
        const auto row = rows.find(manifest.iteration);
        metrics::Row metrics = row != rows.end() ? row->second : metrics::Row(manifest.metrics);
        if (!metrics.contains("training_iteration")) metrics["training_iteration"] = manifest.iteration;
        found.emplace_back(dir, metrics.dump());
    }
    return found;
}

std::size_t result_rows(const std::string& run_dir) {
    std::ifstream rows(runlog::path_in(run_dir, runlog::kResults));
    std::size_t count = 0;
    for (std::string line; std::getline(rows, line);)
        if (line.find_first_not_of(" \t\r") != std::string::npos) ++count;
    return count;
}

// The run's result rows with Ray's names added (metrics/ray_result.hpp), as one JSON array text;
// a torn last line (a crash mid-append) is left out, as every reader of the rows does.
std::string ray_rows(const std::string& run_dir) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (metrics::Row& row : metrics::read_rows(runlog::path_in(run_dir, runlog::kResults)).rows)
        rows.push_back(metrics::with_ray_names(std::move(row)));
    return rows.dump();
}

// How the run's record ends: status (finished, failed, stopped, running: its last attempt has no
// end record, none: no record), the failure's exit code and message, and the rows it reported.
py::dict outcome(const std::string& run_dir) {
    const runlog::History history = runlog::fold(runlog::read_events(run_dir).events);
    py::dict out;
    out["status"] = history.open ? "running" : "none";
    out["exit_code"] = py::none();
    out["message"] = history.last_end;
    out["reports"] = result_rows(run_dir);
    if (history.open || !history.last_lifecycle) return out;
    const runlog::Event& last = history.event(*history.last_lifecycle);
    if (const auto* failure = last.as<runlog::FailureEvent>()) {
        out["status"] = "failed";
        out["message"] = failure->message;
        if (failure->exit_code) out["exit_code"] = *failure->exit_code;
    } else if (const auto* stop = last.as<runlog::StopEvent>()) {
        out["status"] = "stopped";
        out["exit_code"] = runlog::stop_exit_code(*stop);
    } else if (last.as<runlog::FinishEvent>() != nullptr) {
        out["status"] = "finished";
        out["exit_code"] = 0;
    }
    return out;
}

// A sweep's record as the Python ResultGrid reads it: {metric, mode, trials: [{name, status,
// values: {key: text}}]}, trials in index order.
py::dict sweep(const std::string& sweep_dir) {
    const runlog::SweepState state = runlog::load_state(sweep_dir);
    py::list trials;
    for (const runlog::TrialRecord& trial : state.trials) {
        py::dict values;
        for (const auto& [key, value] : trial.values) values[py::str(key)] = value;
        py::dict row;
        row["name"] = trial.name;
        row["status"] = runlog::status_name(trial.status);
        row["values"] = values;
        trials.append(row);
    }
    py::dict out;
    out["metric"] = state.metric;
    out["mode"] = state.mode;
    out["trials"] = trials;
    return out;
}

// The best trial's name (metrics/best_trial.hpp), None when no trial reported `metric`.
py::object best_trial(const std::string& sweep_dir, const std::string& metric, const std::string& mode,
                      const std::string& scope) {
    const runlog::SweepState state = runlog::load_state(sweep_dir);
    const auto best = metrics::best_trial(sweep_dir, state, metric, mode, metrics::scope_named(scope));
    return best ? py::object(py::str(state.trials[best->index].name)) : py::object(py::none());
}

// run.storage_path as given, or (None) its declared default.
std::string storage_path(const std::optional<std::string>& given) {
    return given ? *given : RunSettings::defaults().storage_path.value;
}

// A run's (or a sweep's) directory from run.storage_path and run.name.
std::string run_dir(const std::string& storage_path, const std::string& name) {
    RunSettings settings = RunSettings::defaults();
    settings.storage_path.value = storage_path;
    settings.name.value = name;
    return runlog::run_dir_path(settings);
}

}  // namespace

void bind_layout(py::module_& module) {
    py::module_ layout = module.def_submodule("layout", "the run directory's layout (C++ owns it)");
    layout.def("storage_path", &storage_path, py::arg("given"), "run.storage_path as given, or (None) its default");
    layout.def("run_dir", &run_dir, py::arg("storage_path"), py::arg("name"),
               "the run directory of run.storage_path and run.name");
    layout.def("results", [](const std::string& run_dir) { return runlog::path_in(run_dir, runlog::kResults); },
               "the run's result rows file (one JSON object per report)");
    layout.def("rows", &ray_rows, py::arg("run_dir"),
               "the run's result rows as a JSON array, each with Ray's names for its autofilled fields");
    layout.def("sweep_record", [](const std::string& sweep_dir) { return runlog::path_in(sweep_dir, runlog::kSweepRecord); },
               "a sweep directory's record of its trials (`trainrt tune` writes it)");
    layout.def("callback_result", &runlog::callback_result_path, py::arg("run_dir"), py::arg("iteration"),
               "RUN_DIR/callback/ITERATION.json: a class Trainable's result before its report, for the driver's callbacks");
    layout.def("callback_verdict", &runlog::callback_verdict_path, py::arg("run_dir"), py::arg("iteration"),
               "RUN_DIR/callback/ITERATION.verdict: the callbacks' answer, checkpoint or continue");
    layout.def("datasets", [](const std::string& run_dir) { return runlog::path_in(run_dir, runlog::kDatasets); },
               py::arg("run_dir"), "the dataset file a Trainer's datasets= are written to");
    layout.def("events", [](const std::string& run_dir) { return runlog::path_in(run_dir, runlog::kEvents); },
               "the run's record of starts, stops and failures");
    layout.def("outcome", &outcome, py::arg("run_dir"),
               "how the run's record ends: {status, exit_code, message, reports}");
    layout.def("sweep", &sweep, py::arg("sweep_dir"),
               "a sweep's record: {metric, mode, trials: [{name, status, values}]}");
    layout.def("best_trial", &best_trial, py::arg("sweep_dir"), py::arg("metric"), py::arg("mode"), py::arg("scope"),
               "the name of the sweep's best trial by `metric` (mode max/min, Ray's scopes), or None");
    layout.def("checkpoints", &checkpoints_with_metrics, py::arg("run_dir"),
               "[(checkpoint directory, manifest metrics as JSON)] of the run's checkpoints, oldest first");
}

}  // namespace trainrt::python
