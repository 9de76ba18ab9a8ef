// comm/gpu.hpp for a build without CUDA and NCCL (TRAINRT_WITH_CUDA=OFF or no toolkit found).
#include "comm/gpu.hpp"

#include "trainrt/error.hpp"

namespace trainrt::comm {
namespace {

[[noreturn]] void no_gpu_build(const char* what) {
    throw ConfigError(std::string("gpu: ") + what + " needs a trainrt built with CUDA and NCCL; this "
                      "build has neither (see `trainrt --version`); set scaling.use_gpu = false");
}

}  // namespace

std::string gpu_build_info() { return "no"; }

int visible_gpu_count(std::string* why) {
    if (why) *why = "this trainrt was built without CUDA";
    return 0;
}

void bind_device(int) { no_gpu_build("binding a GPU"); }

std::string current_device_bus_id() { no_gpu_build("a GPU bus id"); }

std::unique_ptr<Communicator> make_nccl_communicator(Communicator&) { no_gpu_build("an NCCL communicator"); }

std::unique_ptr<Communicator> make_dispatch_communicator(std::unique_ptr<Communicator>,
                                                         std::unique_ptr<Communicator>) {
    no_gpu_build("backend auto on GPUs");
}

void* collective_stream(Communicator&) { no_gpu_build("a CUDA stream"); }

void enqueue_device_allreduce(Communicator&, void*, std::size_t, DType, ReduceOp) {
    no_gpu_build("an allreduce of device memory");
}

void wait_collective_event(Communicator&, void*, const char*) { no_gpu_build("waiting for a CUDA event"); }

}  // namespace trainrt::comm
