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

}  // namespace

std::string package_dir() {
    return directory_of(reinterpret_cast<void*>(&package_dir)) + "/trainrt/python";
}

void ensure_interpreter(bool python_sigint) {
    if (Py_IsInitialized()) return;
    make_libpython_global();
    py::initialize_interpreter(python_sigint);
    py::module_::import("sys").attr("path").attr("insert")(0, package_dir());
    PyEval_SaveThread();  // the thread state is kept for good: the interpreter is never finalized
}

}  // namespace trainrt::python
