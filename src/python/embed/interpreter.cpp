// The embedded interpreter (interpreter.hpp).
#include "python/embed/interpreter.hpp"

#include <dlfcn.h>

#include <filesystem>

#include <pybind11/embed.h>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace py = pybind11;

namespace trainrt::python {
namespace {

std::string directory_of(const void* symbol) {
    Dl_info info{};
    if (::dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return ".";
    return std::filesystem::path(info.dli_fname).parent_path().string();
}

// libtrainrt_python is dlopened with local symbols; extension modules (numpy, torch) expect
// libpython's symbols to be global, as in the python3 executable.
void make_libpython_global() {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&Py_InitializeEx), &info) == 0 || info.dli_fname == nullptr)
        throw ConfigError("python: cannot locate libpython in this process");
    if (::dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) == nullptr)
        throw ConfigError(fmt::format("python: cannot make {} global: {}", info.dli_fname, ::dlerror()));
}

// The embedded interpreter takes the environment this component was built for (TRAINRT_EMBED_PYTHON,
// its interpreter's path): with that path as its program name CPython finds the environment's
// pyvenv.cfg, so sys.prefix and site-packages are the environment's, as when that python3 runs.
void start_interpreter(bool python_sigint) {
    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);
    config.isolated = 0;
    config.use_environment = 1;
    config.install_signal_handlers = python_sigint ? 1 : 0;
    const PyStatus status = PyConfig_SetBytesString(&config, &config.program_name, TRAINRT_EMBED_PYTHON);
    if (PyStatus_Exception(status) != 0) {
        PyConfig_Clear(&config);
        throw ConfigError(fmt::format("python: cannot use {} as the interpreter: {}", TRAINRT_EMBED_PYTHON,
                                      status.err_msg != nullptr ? status.err_msg : "PyConfig failed"));
    }
    try {
        py::initialize_interpreter(&config);  // sys.path[0] = "" as before: modules beside the job
    } catch (const std::exception& error) {
        throw ConfigError(fmt::format("python: cannot start {}: {}", TRAINRT_EMBED_PYTHON, error.what()));
    }
}

}  // namespace

std::string package_dir() {
    return directory_of(reinterpret_cast<void*>(&package_dir)) + "/trainrt/python";
}

void ensure_interpreter(bool python_sigint) {
    if (Py_IsInitialized()) return;
    make_libpython_global();
    start_interpreter(python_sigint);
    py::module_::import("sys").attr("path").attr("insert")(0, package_dir());
    PyEval_SaveThread();  // the thread state is kept for good: the interpreter is never finalized
}

namespace {

struct GilAtExit {
    GilAtExit() = default;
    GilAtExit(const GilAtExit&) = delete;
    GilAtExit& operator=(const GilAtExit&) = delete;
    ~GilAtExit() { PyGILState_Ensure(); }  // kept: the process is ending
};

}  // namespace

void hold_gil_at_exit() {
    thread_local GilAtExit holder;  // its destructor is registered at this first use
    static_cast<void>(&holder);
}

}  // namespace trainrt::python
