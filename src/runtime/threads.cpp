// trainrt::set_blas_threads (trainrt/threads.hpp); compute_threads is comm/compute_threads.cpp.
#include "trainrt/threads.hpp"

#include <cblas.h>

namespace trainrt {

int set_blas_threads(const Context& context) {
    const int threads = compute_threads(context);
    openblas_set_num_threads(threads);
    return threads;
}

}  // namespace trainrt
