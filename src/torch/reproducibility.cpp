// trainrt::torch::enable_reproducibility (torch.hpp).
#include <ATen/Context.h>

#include <cstdlib>

#include "trainrt/torch.hpp"

namespace trainrt::torch {

void enable_reproducibility() {
    // cuBLAS picks its reductions by workspace; a fixed one makes its GEMMs deterministic. Read
    // when its handle is made (the first GEMM on a device), so set before that.
    ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
    at::globalContext().setDeterministicCuDNN(true);
    at::globalContext().setBenchmarkCuDNN(false);
    at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/false);
}

}  // namespace trainrt::torch
