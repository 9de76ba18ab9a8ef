#include "comm/mpi_wait.hpp"

#include <sched.h>

#include "comm/mpi_check.hpp"

namespace trainrt::comm {

void wait_politely(MPI_Request& request) {
    for (;;) {
        int flag = 0;
        TRAINRT_MPI_CHECK(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
        if (flag != 0) return;
        sched_yield();
    }
}

}  // namespace trainrt::comm
