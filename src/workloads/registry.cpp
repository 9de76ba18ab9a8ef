#include "workloads/registry.hpp"

#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "trainrt/error.hpp"
#include "workloads/components.hpp"
#include "workloads/plugin_loader.hpp"

namespace trainrt::workloads {

Workload from_descriptor(const WorkloadDescriptor& descriptor) {
    Workload workload;
    workload.name = descriptor.name;
    workload.description = descriptor.description != nullptr ? descriptor.description : "";
    workload.any_train_key = descriptor.train_keys == nullptr;
    if (descriptor.train_keys != nullptr) workload.train_keys = descriptor.train_keys();
    workload.run = descriptor.run;
    if (descriptor.preflight != nullptr) workload.preflight = descriptor.preflight;
    return workload;
}

const std::map<std::string, Workload>& builtin() {
    static const std::map<std::string, Workload> all = [] {
        std::map<std::string, Workload> table;
        for (const WorkloadDescriptor* descriptor : builtin_descriptors())
            table.emplace(descriptor->name, from_descriptor(*descriptor));
        return table;
    }();
    return all;
}

config::WorkloadKeys keys_by_workload() {
    config::WorkloadKeys keys;
    for (const auto& [name, workload] : builtin())
        if (!workload.any_train_key) keys[name] = workload.train_keys;
    for (const ComponentWorkload& workload : component_workloads())
        if (workload.name != "python") keys[workload.name] = workload.train_keys;  // python: any train key
    return keys;
}

const Workload& find(const std::string& name) {
    if (is_python_workload(name)) return find("python");  // the function is the config's run.workload
    if (auto component = component_workload(name))
        return find("plugin:" + component_library_path(*component) + ":" + name);
    if (name.rfind("plugin:", 0) == 0) {
        static std::mutex mutex;
        static std::map<std::string, std::unique_ptr<Workload>> plugins;
        std::lock_guard<std::mutex> lock(mutex);
        auto& slot = plugins[name];
        if (!slot) slot = std::make_unique<Workload>(from_descriptor(load_plugin(parse_plugin_ref(name))));
        return *slot;
    }
    auto found = builtin().find(name);
    if (found == builtin().end())
        throw ConfigError(fmt::format("config: unknown workload '{}'; built in: fashion_mlp, torch_fashion_mlp, "
                                      "torch_fashion_cnn; or plugin:/path/libmine.so[:name], or python:FILE.py:FUNC", name));
    return found->second;
}

}  // namespace trainrt::workloads
