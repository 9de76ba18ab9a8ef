// trainrt::compute_threads (trainrt/threads.hpp): the threads a rank may keep busy. In comm, beside
// the Context it divides by, so that the checkpoint layer's copies use the same rule as the
// runtime's BLAS threads (runtime/threads.cpp).
#include <sched.h>

#include <algorithm>
#include <cstdlib>

#include "trainrt/threads.hpp"

namespace trainrt {
namespace {

int positive_env(const char* name) {
    const char* text = std::getenv(name);
    if (text == nullptr) return 0;
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    return end != text && *end == '\0' && value > 0 && value < 4096 ? static_cast<int>(value) : 0;
}

}  // namespace

int usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    return sched_getaffinity(0, sizeof set, &set) == 0 ? std::max(1, CPU_COUNT(&set)) : 1;
}

int compute_threads(const Context& context) {
    int threads = positive_env("OMP_NUM_THREADS");
    if (threads == 0) threads = positive_env("SLURM_CPUS_PER_TASK");
    if (threads == 0) threads = std::max(1, usable_cpus() / std::max(1, context.local_size));
    return threads;
}

}  // namespace trainrt
