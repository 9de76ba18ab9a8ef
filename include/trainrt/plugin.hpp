#pragma once
// Bring your own training function (Ray Train's train_loop_per_worker), two ways:
//
//  - a plugin: a shared library that registers it,
//        void train(trainrt::Session& session) { ... }
//        TRAINRT_WORKLOAD(my_model, train);
//    selected with  run.workload = plugin:/path/libmine.so[:my_model]  (the name may be left out
//    when the library registers one workload). Build it with find_package(trainrt) and
//    target_link_libraries(mine PRIVATE trainrt::trainrt); docs/guides/libtorch.md.
//  - embedded: your program calls trainrt::run(argc, argv, train) (run.hpp).
//
// The library records the trainrt version and plugin ABI it was compiled against; trainrt refuses
// (exit 2, before anything starts) a library built against another version.
#include <vector>

#include "trainrt/version.hpp"
#include "trainrt/config.hpp"
#include "trainrt/context.hpp"
#include "trainrt/session.hpp"

namespace trainrt {

using TrainingFunction = void (*)(Session&);

// Changes whenever the public headers change in a way that breaks compiled plugins.
inline constexpr int plugin_abi_version = 1;

struct WorkloadDescriptor {
    int abi_version;                 // plugin_abi_version when compiled
    const char* trainrt_version;     // TRAINRT_VERSION when compiled
    const char* name;                // a C identifier; the symbol is trainrt_workload_<name>
    const char* description;
    TrainingFunction run;
    // Optional (nullptr): the train.* keys it accepts (checked before anything starts; without
    // it any train.* key is accepted), and a check of its inputs on every rank before the run
    // directory is touched (throw trainrt::Error with one line to refuse).
    std::vector<OptionSpec> (*train_keys)();
    void (*preflight)(const JobConfig&, const Context&);
};

namespace detail {
// Notes a descriptor in trainrt's registry; called by TRAINRT_WORKLOAD's static initializer when
// the library that holds it is loaded.
void announce_workload(const WorkloadDescriptor* descriptor) noexcept;
struct WorkloadAnnouncer {
    explicit WorkloadAnnouncer(const WorkloadDescriptor* descriptor) noexcept {
        announce_workload(descriptor);
    }
};
}  // namespace detail

}  // namespace trainrt

// Registers `fn` (void(trainrt::Session&)) as workload `name` (an identifier), with optional
// train-key and preflight functions (nullptr for none).
#define TRAINRT_WORKLOAD_WITH(name, description, fn, train_keys, preflight)                     \
    extern "C" __attribute__((visibility("default"), used))                                     \
    const ::trainrt::WorkloadDescriptor trainrt_workload_##name{                                \
        ::trainrt::plugin_abi_version, TRAINRT_VERSION, #name, description, fn, train_keys,    \
        preflight};                                                                             \
    static const ::trainrt::detail::WorkloadAnnouncer trainrt_announcer_##name{                 \
        &trainrt_workload_##name}

#define TRAINRT_WORKLOAD(name, fn) TRAINRT_WORKLOAD_WITH(name, "", fn, nullptr, nullptr)
