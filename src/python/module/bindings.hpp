#pragma once
// The parts of the `trainrt._trainrt` extension module (module.cpp assembles them). The module is
// what Python code sees of trainrt: the session of the running training function, committed
// checkpoints, and trainrt.run(). It links libtrainrt only (never LibTorch).
#include <pybind11/pybind11.h>

#include "trainrt/session.hpp"

namespace trainrt::python {

// A borrowed session: valid while the training function runs (trainrt/_entry.py drops it after).
struct SessionHandle {
    Session* session = nullptr;
};

void bind_errors(pybind11::module_& module);
void bind_session(pybind11::module_& module);
void bind_checkpoint(pybind11::module_& module);
void bind_dataset(pybind11::module_& module);
void bind_run(pybind11::module_& module);
void bind_log(pybind11::module_& module);
void bind_layout(pybind11::module_& module);
void bind_ini(pybind11::module_& module);

// Runs `function` under `session` through trainrt/_entry.py's run_function; raises the trainrt
// error of its verdict (the runtime then records the failure and ends the run).
void run_python_function(Session& session, const pybind11::object& function);

}  // namespace trainrt::python
