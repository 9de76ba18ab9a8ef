// A plugin that claims to be built against another trainrt: its descriptor is written by hand
// (TRAINRT_WORKLOAD would record this build's version). trainrt must refuse it before training.
#include <trainrt/plugin.hpp>

namespace {
void train(trainrt::Session&) {}
}  // namespace

extern "C" __attribute__((visibility("default"))) const trainrt::WorkloadDescriptor
    trainrt_workload_old{trainrt::plugin_abi_version, "0.0.9", "old", "", train, nullptr, nullptr};
static const trainrt::detail::WorkloadAnnouncer announce_old{&trainrt_workload_old};
