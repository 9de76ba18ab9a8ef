// The Python component's side of workloads/python_calls.hpp: a function of trainrt's package
// called from C++ with one string argument, in the embedded interpreter.
#include <pybind11/embed.h>

#include <fmt/format.h>

#include "python/embed/interpreter.hpp"
#include "trainrt/error.hpp"
#include "workloads/python_calls.hpp"

namespace py = pybind11;

namespace trainrt::python {
namespace {

std::string call_package(const std::string& module, const std::string& function, const std::string& argument) {
    ensure_interpreter(false);
    py::gil_scoped_acquire locked;
    const std::string name = "trainrt." + module;
    try {
        return py::str(py::module_::import(name.c_str()).attr(function.c_str())(argument)).cast<std::string>();
    } catch (py::error_already_set& error) {
        const std::string text = py::str(error.value()).cast<std::string>();
        if (error.matches(py::module_::import("trainrt._entry").attr("LoadError")))
            throw ConfigError(text.substr(0, text.find('\n')));
        throw WorkloadError(fmt::format("python: {}.{} failed: {}", name, function, error.what()));
    }
}

}  // namespace
}  // namespace trainrt::python

extern "C" {
// Found by libtrainrt with dlsym (workloads/python_calls.cpp).
__attribute__((visibility("default"))) extern const trainrt::workloads::PythonCalls trainrt_python_calls;
const trainrt::workloads::PythonCalls trainrt_python_calls = {trainrt::workloads::kPythonCallsAbi,
                                                              &trainrt::python::call_package};
}
