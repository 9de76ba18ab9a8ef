// trainrt::tune::trial_threads (trial_threads.hpp).
#include "tune/trial_threads.hpp"

#include <algorithm>

#include "trainrt/threads.hpp"

namespace trainrt::tune {

int trial_threads(int cpus, std::size_t ranks_at_once) {
    const auto ranks = static_cast<int>(std::max<std::size_t>(1, ranks_at_once));
    return std::max(1, cpus / ranks);
}

std::vector<std::string> trial_environment(std::size_t ranks_at_once, const char* user_threads, bool inside_slurm) {
    if (inside_slurm || (user_threads != nullptr && *user_threads != '\0')) return {};
    return {"OMP_NUM_THREADS=" + std::to_string(trial_threads(usable_cpus(), ranks_at_once))};
}

}  // namespace trainrt::tune
