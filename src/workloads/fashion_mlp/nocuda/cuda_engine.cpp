// fashion_mlp's CUDA engine in a build without CUDA: refused before anything starts elsewhere;
// this is the last line of defence.
#include "trainrt/error.hpp"
#include "workloads/fashion_mlp/engine.hpp"

namespace trainrt::workloads::fashion_mlp {

std::unique_ptr<Engine> make_cuda_engine(Mlp&, Communicator&, const CudaOptions&) {
    throw ConfigError("fashion_mlp: scaling.use_gpu = true needs a trainrt built with CUDA (see `trainrt --version`)");
}

}  // namespace trainrt::workloads::fashion_mlp
