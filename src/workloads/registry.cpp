#include "workloads/registry.hpp"

#include <memory>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/values.hpp"
#include "trainrt/error.hpp"
#include "workloads/components.hpp"
#include "workloads/plugin_loader.hpp"

namespace trainrt::workloads {
namespace {

constexpr const char* kPluginPrefix = "plugin:";

const Workload& plugin(const std::string& name) {
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<Workload>> plugins;
    std::lock_guard<std::mutex> lock(mutex);
    auto& slot = plugins[name];
    if (!slot) slot = std::make_unique<Workload>(from_descriptor(load_plugin(parse_plugin_ref(name))));
    return *slot;
}

// The component library that registers workload `name` (loading each built one that serves
// named workloads); "" when none does.
std::string component_with(const std::string& name) {
    for (const Component& component : components()) {
        if (!component.built || !component.prefix.empty()) continue;
        try {
            const std::string path = component_library_path(component);
            for (const WorkloadDescriptor* descriptor : load_library(path))
                if (name == descriptor->name) return path;
        } catch (const ConfigError&) {  // not installed beside libtrainrt: it serves nothing
        }
    }
    return "";
}

[[noreturn]] void unknown(const std::string& name) {
    std::vector<std::string> names;
    for (const auto& [known, workload] : builtin()) names.push_back(known);
    for (const Workload& workload : component_workloads()) names.push_back(workload.name);
    for (const Component& component : components())
        if (component.built) names.insert(names.end(), component.names.begin(), component.names.end());
    const std::string close = config::closest_match(name, names);
    std::string unbuilt;
    for (const Component& component : components())
        if (!component.built && component.prefix.empty())
            unbuilt += fmt::format("; workloads of trainrt's {} component, which this trainrt was built without ({}), "
                                   "are not available", component.name, component.build_with);
    throw ConfigError(fmt::format("config: unknown workload '{}'{}; known: {}; or plugin:/path/libmine.so[:name], or "
                                  "python:FILE.py:FUNC{}", name, close.empty() ? "" : ": did you mean '" + close + "'?",
                                  fmt::join(names, ", "), unbuilt));
}

}  // namespace

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
    return keys;
}

std::vector<Workload> component_workloads() {
    std::vector<Workload> all;
    for (const Component& component : components()) {
        if (!component.built || !component.prefix.empty()) continue;
        try {
            for (const WorkloadDescriptor* descriptor : load_library(component_library_path(component)))
                all.push_back(from_descriptor(*descriptor));
        } catch (const ConfigError&) {  // not installed beside libtrainrt: listed as none
        }
    }
    return all;
}

config::WorkloadKeys all_workload_keys() {
    config::WorkloadKeys keys = keys_by_workload();
    for (const Workload& workload : component_workloads())
        if (!workload.any_train_key) keys[workload.name] = workload.train_keys;
    return keys;
}

const Workload& find(const std::string& name) {
    if (auto component = component_for_prefix(name))  // python:FILE.py:FUNC or xgboost: the component finds the function
        return plugin(fmt::format("{}{}:{}", kPluginPrefix, component_library_path(*component),
                                  component->prefix.substr(0, component->prefix.size() - 1)));
    if (name.rfind(kPluginPrefix, 0) == 0) return plugin(name);
    if (auto found = builtin().find(name); found != builtin().end()) return found->second;
    const std::string library = component_with(name);
    if (library.empty()) unknown(name);
    return plugin(fmt::format("{}{}:{}", kPluginPrefix, library, name));
}

}  // namespace trainrt::workloads
