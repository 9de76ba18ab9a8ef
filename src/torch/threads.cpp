// trainrt::torch::set_compute_threads (torch.hpp): trainrt's per-rank count (threads.hpp) for
// OpenBLAS, which Debian's torch calls and which ignores torch's setting, and for torch itself.
#include <ATen/Parallel.h>

#include "trainrt/threads.hpp"
#include "trainrt/torch.hpp"

namespace trainrt::torch {

int set_compute_threads(const Session& session) {
    const int threads = set_blas_threads(session.context());
    at::set_num_threads(threads);
    return threads;
}

}  // namespace trainrt::torch
