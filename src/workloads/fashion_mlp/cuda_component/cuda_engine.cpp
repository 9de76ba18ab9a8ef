// fashion_mlp's CUDA engine in a build with CUDA: made by libtrainrt_cuda, loaded on first use.
#include "comm/gpu_component.hpp"
#include "workloads/fashion_mlp/engine.hpp"

namespace trainrt::workloads::fashion_mlp {

std::unique_ptr<Engine> make_cuda_engine(Mlp& model, Communicator& comm, const CudaOptions& options) {
    const auto* api = static_cast<const CudaEngineApi*>(comm::cuda_component_symbol("trainrt_cuda_fashion_engine"));
    return api->make(model, comm, options);
}

}  // namespace trainrt::workloads::fashion_mlp
