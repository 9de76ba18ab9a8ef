// trainrt::torch::weights_digest (torch.hpp).
#include <torch/torch.h>

#include <memory>

#include <fmt/format.h>
#include <xxhash.h>

#include "trainrt/error.hpp"
#include "trainrt/torch.hpp"

namespace trainrt::torch {
namespace {

using HashState = std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)>;

void hash_tensor(XXH3_state_t& state, const at::Tensor& tensor) {
    const at::Tensor bytes = tensor.detach().to(at::kCPU).contiguous();
    XXH3_64bits_update(&state, bytes.data_ptr(), bytes.nbytes());
}

}  // namespace

std::string weights_digest(const ::torch::nn::Module& module) {
    HashState state(XXH3_createState(), &XXH3_freeState);
    if (!state || XXH3_64bits_reset(state.get()) == XXH_ERROR)
        throw Error("weights_digest: XXH3 cannot start a hash (out of memory)");
    for (const at::Tensor& parameter : module.parameters()) hash_tensor(*state, parameter);
    for (const at::Tensor& buffer : module.buffers()) hash_tensor(*state, buffer);
    return fmt::format("{:016x}", XXH3_64bits_digest(state.get()));
}

}  // namespace trainrt::torch
