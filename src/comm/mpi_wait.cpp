#include "comm/mpi_wait.hpp"

#include <sched.h>

#include <chrono>
#include <thread>

#include "comm/mpi_check.hpp"

namespace trainrt::comm {

namespace {
bool test_request(MPI_Request& request) {
    int flag = 0;
    TRAINRT_MPI_CHECK(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
    return flag != 0;
}
}  // namespace

void wait_politely(MPI_Request& request) {
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < kSpinBeforeSleep) {
        if (test_request(request)) return;
        sched_yield();
    }
    auto pause = kFirstSleep;
    while (!test_request(request)) {
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, kLongestSleep);
    }
}

}  // namespace trainrt::comm
