// trainrt.run() from Python (the twin of trainrt::run in C++, run.hpp), and the one way a Python
// training function is run under a session: trainrt/_entry.py's run_function, whose verdict
// becomes the trainrt error that ends the run.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "python/failure.hpp"
#include "python/module/bindings.hpp"
#include "trainrt/run.hpp"

namespace py = pybind11;

namespace trainrt::python {

void run_python_function(Session& session, const py::object& function) {
    const py::object entry = py::module_::import("trainrt._entry");
    throw_on_failure(entry.attr("run_function")(py::cast(SessionHandle{&session}), function));
}

namespace {

// The process exit code (README "Exit codes"). Python code runs on this (the main) thread, which
// keeps the GIL; trainrt's own threads never take it.
int run_from_python(const std::vector<std::string>& argv, const py::object& function, const std::string& name) {
    std::vector<const char*> args;
    for (const std::string& arg : argv) args.push_back(arg.c_str());
    args.push_back(nullptr);
    return run(static_cast<int>(argv.size()), args.data(),
               [&function](Session& session) { run_python_function(session, function); }, name.c_str());
}

}  // namespace

void bind_run(py::module_& module) {
    module.def("run", &run_from_python, py::arg("argv"), py::arg("function"), py::arg("name"));
}

}  // namespace trainrt::python
