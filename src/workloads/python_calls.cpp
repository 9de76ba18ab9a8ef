#include "workloads/python_calls.hpp"

#include <dlfcn.h>

#include <mutex>

#include <fmt/format.h>

#include "trainrt/error.hpp"
#include "workloads/components.hpp"

namespace trainrt::workloads {
namespace {

// Loaded once and kept for the process's life: the interpreter it starts is never finalized.
const PythonCalls& python_calls() {
    static std::once_flag once;
    static const PythonCalls* table = nullptr;
    static std::string why;
    std::call_once(once, [] {
        const auto component = component_for_prefix("python:");
        try {
            const std::string path = component_library_path(*component);
            void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
            const char* error = handle == nullptr ? ::dlerror() : nullptr;
            if (handle == nullptr)
                why = fmt::format("cannot load trainrt's Python component {}: {}", path, error != nullptr ? error : "dlopen failed");
            else
                table = static_cast<const PythonCalls*>(::dlsym(handle, "trainrt_python_calls"));
            if (handle != nullptr && (table == nullptr || table->abi != kPythonCallsAbi))
                why = fmt::format("trainrt's Python component {} is of another trainrt version; reinstall trainrt", path),
                table = nullptr;
        } catch (const ConfigError& error) {
            why = error.what();
        }
    });
    if (table == nullptr) throw ConfigError(why);
    return *table;
}

}  // namespace

std::string call_python(const std::string& module, const std::string& function, const std::string& argument) {
    return python_calls().call(module, function, argument);
}

}  // namespace trainrt::workloads
