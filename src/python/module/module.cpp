// trainrt._trainrt: the extension module (bindings.hpp).
#include "python/module/bindings.hpp"

PYBIND11_MODULE(_trainrt, module) {
    module.doc() = "trainrt's C++ runtime as seen from Python (use the trainrt package, not this module)";
    trainrt::python::bind_errors(module);
    trainrt::python::bind_session(module);
    trainrt::python::bind_checkpoint(module);
    trainrt::python::bind_dataset(module);
    trainrt::python::bind_run(module);
    trainrt::python::bind_log(module);
    trainrt::python::bind_layout(module);
    trainrt::python::bind_ini(module);
}
