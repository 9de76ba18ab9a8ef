#pragma once
// The embedded CPython of a `python:` workload: started once per process, on the main thread.
// The GIL is released once started: whoever calls into Python takes it (py::gil_scoped_acquire)
// for the call only, so that trainrt's collectives between calls never freeze the function's
// Python threads (XGBoost's tracker serves the other ranks' shutdown after a stop). Never
// finalized: torch's and numpy's threads may outlive a finalize, and the process exits right
// after the run.
#include <string>

namespace trainrt::python {

// Starts the interpreter when not yet started: libpython made global for extension modules,
// trainrt's package first on sys.path, and, with `python_sigint` (a training function's process),
// Python's own SIGINT handler (Ctrl-C raises KeyboardInterrupt as in a plain Python program;
// trainrt's stop signals stay trainrt's). Without it (a sweep's driver calling the package) every
// handler the process installed stays.
void ensure_interpreter(bool python_sigint = true);

// Takes the GIL for good when this thread's thread-locals are destroyed at exit. Extension modules
// keep Python objects in C++ thread-locals (torch's DTensor sharding cache, filled by FSDP2) whose
// destructors drop them without taking the GIL: a fatal Python error at the exit of a run that went
// well. Call it on the function's thread after the function ran: thread-locals are destroyed in
// reverse order of construction, so this one goes first.
void hold_gil_at_exit();

// <directory of libtrainrt_python>/trainrt/python: where the trainrt package lives.
std::string package_dir();

}  // namespace trainrt::python
