// Loading libtrainrt_cuda (comm/gpu_component.hpp) in a build with CUDA.
#include <dlfcn.h>

#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include "comm/gpu_component.hpp"
#include "config/install_layout.hpp"
#include "trainrt/error.hpp"

namespace trainrt::comm {
namespace {

// Loaded once, kept for the process's life: its code backs communicators and engines until exit.
void* open_component() {
    static std::once_flag once;
    static void* handle = nullptr;
    static std::string why;
    std::call_once(once, [] {
        const std::string path = config::library_dir() + "/" + config::versioned_library("libtrainrt_cuda");
        if (!std::filesystem::exists(path)) {
            why = fmt::format("trainrt's CUDA component ({}) is not beside libtrainrt; reinstall trainrt with "
                              "it, or set scaling.use_gpu = false", path);
            return;
        }
        handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
            const char* error = ::dlerror();
            why = fmt::format("cannot load trainrt's CUDA component {}: {}; check the CUDA and NCCL "
                              "libraries (ldconfig, LD_LIBRARY_PATH) or set scaling.use_gpu = false",
                              path, error != nullptr ? error : "dlopen failed");
        }
    });
    if (handle == nullptr) throw ConfigError("gpu: " + why);
    return handle;
}

}  // namespace

const void* cuda_component_symbol(const char* name) {
    void* handle = open_component();
    const void* symbol = ::dlsym(handle, name);
    if (symbol == nullptr)
        throw ConfigError(fmt::format("gpu: trainrt's CUDA component has no {}: it is of another trainrt "
                                      "version; reinstall trainrt", name));
    if (*static_cast<const int*>(symbol) != kGpuComponentAbi)
        throw ConfigError(fmt::format("gpu: trainrt's CUDA component has ABI {} for {}, this trainrt needs {}; "
                                      "reinstall trainrt", *static_cast<const int*>(symbol), name, kGpuComponentAbi));
    return symbol;
}

}  // namespace trainrt::comm
