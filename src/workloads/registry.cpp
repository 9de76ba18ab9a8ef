#include "workloads/registry.hpp"

#include <fmt/format.h>

#include "trainrt/error.hpp"
#include "workloads/fashion_mlp/fashion_mlp.hpp"

namespace trainrt::workloads {

const std::map<std::string, Workload>& builtin() {
    static const std::map<std::string, Workload> all = [] {
        std::map<std::string, Workload> table;
        for (Workload workload : {fashion_mlp::workload()}) table.emplace(workload.name, workload);
        return table;
    }();
    return all;
}

config::WorkloadKeys keys_by_workload() {
    config::WorkloadKeys keys;
    for (const auto& [name, workload] : builtin()) keys[name] = workload.train_keys;
    return keys;
}

const Workload& find(const std::string& name) {
    auto found = builtin().find(name);
    if (found == builtin().end())
        throw ConfigError(fmt::format("config: unknown workload '{}'", name));
    return found->second;
}

}  // namespace trainrt::workloads
