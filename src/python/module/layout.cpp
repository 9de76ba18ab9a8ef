// trainrt._trainrt.layout: the run directory's layout as C++ owns it (runlog/run_files.hpp,
// checkpoint/catalog.hpp), so that the Python package spells no file name of a run directory.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "checkpoint/catalog.hpp"
#include "python/module/bindings.hpp"
#include "runlog/run_files.hpp"

namespace py = pybind11;

namespace trainrt::python {
namespace {

// [(checkpoint directory, its manifest's metrics as JSON text)] of the run's checkpoints whose
// manifest reads, oldest first. Whether one verifies is Checkpoint.open's to say.
std::vector<std::pair<std::string, std::string>> checkpoints_with_metrics(const std::string& run_dir) {
    std::vector<std::pair<std::string, std::string>> found;
    for (const std::string& name : checkpoint::committed_names(run_dir)) {
        const std::string dir = checkpoint::checkpoints_dir(run_dir) + "/" + name;
        checkpoint::Manifest manifest;
        if (checkpoint::read_manifest_or_reason(dir, manifest).empty()) found.emplace_back(dir, manifest.metrics.dump());
    }
    return found;
}

}  // namespace

void bind_layout(py::module_& module) {
    py::module_ layout = module.def_submodule("layout", "the run directory's layout (C++ owns it)");
    layout.def("results", [](const std::string& run_dir) { return runlog::path_in(run_dir, runlog::kResults); },
               "the run's result rows file (one JSON object per report)");
    layout.def("events", [](const std::string& run_dir) { return runlog::path_in(run_dir, runlog::kEvents); },
               "the run's record of starts, stops and failures");
    layout.def("checkpoints", &checkpoints_with_metrics, py::arg("run_dir"),
               "[(checkpoint directory, manifest metrics as JSON)] of the run's checkpoints, oldest first");
}

}  // namespace trainrt::python
