#pragma once
// Loading plugin workloads: dlopen the library, find its TRAINRT_WORKLOAD descriptor, check the
// version and ABI it was built against. The library stays loaded for the life of the process.
#include <string>
#include <vector>

#include "trainrt/plugin.hpp"

namespace trainrt::workloads {

// "plugin:/path/libx.so:name" -> {"/path/libx.so", "name"}; name "" when left out.
struct PluginRef {
    std::string path;
    std::string name;
};
PluginRef parse_plugin_ref(const std::string& workload);

// The descriptor of `ref`'s workload; ConfigError (one line) when anything is wrong.
const WorkloadDescriptor& load_plugin(const PluginRef& ref);

// Every workload `path`'s library registers (loaded once; ConfigError when it cannot be).
const std::vector<const WorkloadDescriptor*>& load_library(const std::string& path);

// Descriptors announced while no plugin was loading (the built-ins), in announcement order.
const std::vector<const WorkloadDescriptor*>& builtin_descriptors();

}  // namespace trainrt::workloads
