#include "workloads/plugin_loader.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trainrt/error.hpp"

namespace trainrt {
namespace workloads {
namespace {

std::vector<const WorkloadDescriptor*>& builtins() {
    static std::vector<const WorkloadDescriptor*> all;
    return all;
}

// Set while dlopen runs: the plugin's static initializers announce into it.
std::vector<const WorkloadDescriptor*>* capturing = nullptr;

// An open library, never closed: its code runs until the process ends.
class LoadedLibrary {
public:
    explicit LoadedLibrary(void* handle) : handle_(handle) {}
    LoadedLibrary(LoadedLibrary&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
    LoadedLibrary(const LoadedLibrary&) = delete;
    LoadedLibrary& operator=(const LoadedLibrary&) = delete;
    void* get() const { return handle_; }

private:
    void* handle_;
};

[[noreturn]] void refuse(const PluginRef& ref, const std::string& why) {
    throw ConfigError(fmt::format("workload plugin {}: {}", ref.path, why));
}

std::string major_minor(const std::string& version) {
    auto second_dot = version.find('.', version.find('.') + 1);
    return version.substr(0, second_dot);
}

void check_built_for_us(const PluginRef& ref, const WorkloadDescriptor& descriptor) {
    const std::string theirs = descriptor.trainrt_version != nullptr ? descriptor.trainrt_version : "?";
    if (descriptor.abi_version != plugin_abi_version || major_minor(theirs) != major_minor(TRAINRT_VERSION))
        refuse(ref, fmt::format("built against trainrt {} (plugin ABI {}), this is trainrt {} (plugin "
                                "ABI {}); rebuild it against this version (find_package(trainrt))",
                                theirs, descriptor.abi_version, TRAINRT_VERSION, plugin_abi_version));
    if (descriptor.run == nullptr) refuse(ref, fmt::format("workload '{}' has no training function", descriptor.name));
}

// Loading a plugin also runs the initializers of libraries it brings along (libtrainrt_torch
// announces its built-in workloads): only descriptors defined in the plugin's own file count.
void keep_own(const std::string& real_path, std::vector<const WorkloadDescriptor*>& announced) {
    auto elsewhere = [&](const WorkloadDescriptor* descriptor) {
        Dl_info info{};
        char where[PATH_MAX];
        return ::dladdr(descriptor, &info) == 0 || info.dli_fname == nullptr ||
               ::realpath(info.dli_fname, where) == nullptr || real_path != where;
    };
    announced.erase(std::remove_if(announced.begin(), announced.end(), elsewhere), announced.end());
}

// Opened by its absolute path: a bare "libx.so" would make dlopen search the library path.
LoadedLibrary open_library(const PluginRef& ref, const std::string& real_path,
                           std::vector<const WorkloadDescriptor*>& announced) {
    capturing = &announced;
    void* handle = ::dlopen(real_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    capturing = nullptr;
    if (handle == nullptr) {
        const char* why = ::dlerror();
        refuse(ref, fmt::format("cannot load it: {}", why != nullptr ? why : "dlopen failed"));
    }
    keep_own(real_path, announced);
    return LoadedLibrary(handle);
}

const WorkloadDescriptor& pick(const PluginRef& ref, const LoadedLibrary& library,
                               const std::vector<const WorkloadDescriptor*>& announced) {
    std::vector<std::string> names;
    for (const WorkloadDescriptor* descriptor : announced) names.push_back(descriptor->name);
    if (ref.name.empty()) {
        if (announced.size() == 1) return *announced.front();
        if (announced.empty())
            refuse(ref, "it registers no workload (TRAINRT_WORKLOAD in trainrt/plugin.hpp)");
        refuse(ref, fmt::format("it registers {} workloads ({}); name one: plugin:{}:NAME",
                                announced.size(), fmt::join(names, ", "), ref.path));
    }
    const std::string symbol = "trainrt_workload_" + ref.name;
    auto* found = static_cast<const WorkloadDescriptor*>(::dlsym(library.get(), symbol.c_str()));
    // dlsym also searches the plugin's dependencies (libtrainrt's own workloads): only the
    // plugin's announced descriptors count.
    if (std::find(announced.begin(), announced.end(), found) == announced.end()) found = nullptr;
    if (found == nullptr)
        refuse(ref, fmt::format("no workload '{}' (symbol {} not found); it registers: {}", ref.name,
                                symbol, names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
    return *found;
}

}  // namespace

PluginRef parse_plugin_ref(const std::string& workload) {
    PluginRef ref;
    std::string rest = workload.substr(std::string("plugin:").size());
    auto colon = rest.rfind(':');
    auto slash = rest.rfind('/');
    if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
        ref.path = rest.substr(0, colon);
        ref.name = rest.substr(colon + 1);
    } else {
        ref.path = rest;
    }
    return ref;
}

namespace {

struct Loaded {
    LoadedLibrary library;
    std::vector<const WorkloadDescriptor*> announced;
};

// The library at `ref.path`, loaded once (its initializers announce its workloads once).
const Loaded& load_once(const PluginRef& ref) {
    static std::mutex mutex;
    static std::map<std::string, Loaded> by_path;
    std::lock_guard<std::mutex> lock(mutex);
    char resolved[PATH_MAX];
    if (::access(ref.path.c_str(), R_OK) != 0 || ::realpath(ref.path.c_str(), resolved) == nullptr)
        refuse(ref, "no such readable file; give the shared library's path (run.workload = "
                    "plugin:/path/libmine.so[:name])");
    auto found = by_path.find(resolved);
    if (found == by_path.end()) {
        std::vector<const WorkloadDescriptor*> announced;
        LoadedLibrary library = open_library(ref, resolved, announced);
        found = by_path.emplace(resolved, Loaded{std::move(library), std::move(announced)}).first;
    }
    return found->second;
}

}  // namespace

const WorkloadDescriptor& load_plugin(const PluginRef& ref) {
    const Loaded& loaded = load_once(ref);
    const WorkloadDescriptor& descriptor = pick(ref, loaded.library, loaded.announced);
    check_built_for_us(ref, descriptor);
    return descriptor;
}

const std::vector<const WorkloadDescriptor*>& load_library(const std::string& path) {
    return load_once({path, ""}).announced;
}

const std::vector<const WorkloadDescriptor*>& builtin_descriptors() { return builtins(); }

}  // namespace workloads

void detail::announce_workload(const WorkloadDescriptor* descriptor) noexcept {
    try {
        (workloads::capturing != nullptr ? *workloads::capturing : workloads::builtins()).push_back(descriptor);
    } catch (...) {  // out of memory at start-up: the workload is simply not found later
    }
}

}  // namespace trainrt
