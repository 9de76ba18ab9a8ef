// The `python` workload: run.workload = python:FILE.py:FUNC or python:package.module:FUNC.
// Preflight (every rank, before the run directory is touched): start CPython and load the
// function through trainrt/_entry.py, whose LoadError is the one line a user sees (exit 2).
// Run: trainrt/_entry.py's run_function under this session; its verdict ends the run.
#include <pybind11/embed.h>

#include <fmt/format.h>

#include "python/embed/interpreter.hpp"
#include "config/settings.hpp"
#include "python/failure.hpp"
#include "python/settings_view.hpp"
#include "trainrt/plugin.hpp"

namespace py = pybind11;

namespace trainrt::python {
namespace {

// Leaked with the interpreter (never finalized): no Python object outlives it in a destructor.
py::object& loaded_function() {
    static auto* function = new py::object();
    return *function;
}

// The first line of a Python exception's text (LoadError's own line, else the exception).
std::string first_line(const py::error_already_set& error) {
    std::string text = py::str(error.value()).cast<std::string>();
    if (!error.matches(py::module_::import("trainrt._entry").attr("LoadError")))
        text = py::str(error.type().attr("__name__")).cast<std::string>() + ": " + text;
    return text.substr(0, text.find('\n'));
}

void preflight(const JobConfig& config, const Context& context) {
    ensure_interpreter();
    py::gil_scoped_acquire locked;
    try {
        const py::object entry = py::module_::import("trainrt._entry");
        loaded_function() = entry.attr("load")(RunSettings::read(config).workload.value, settings_view(config),
                                                  settings_view(config, true), context.world_rank,
                                                  train_config(config));
    } catch (py::error_already_set& error) {
        throw ConfigError(first_line(error));
    }
}

void run_function(Session& session) {
    struct AfterRun {  // once the function's imports made their statics, however it ended
        ~AfterRun() { hold_gil_at_exit(); }
    } after_run;
    py::gil_scoped_acquire locked;
    try {
        const py::object handle =
            py::module_::import("trainrt._trainrt").attr("_session")(py::capsule(&session, "trainrt.Session"));
        throw_on_failure(py::module_::import("trainrt._entry").attr("run_function")(handle, loaded_function()));
    } catch (py::error_already_set& error) {  // a bug in trainrt's own Python code
        throw WorkloadError(fmt::format("python: trainrt's runner failed: {}", error.what()));
    }
}

}  // namespace
}  // namespace trainrt::python

TRAINRT_WORKLOAD_WITH(python, "a Python training function: run.workload = python:FILE.py:FUNC",
                      trainrt::python::run_function, nullptr, trainrt::python::preflight);
