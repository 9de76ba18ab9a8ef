#pragma once
// Every MPI call goes through TRAINRT_MPI_CHECK: a failure becomes a CommError naming the call
// and carrying MPI's own error text. (MPI_ERRORS_RETURN is set on every communicator we own.)
#include <string>

namespace trainrt::comm {

[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);

}  // namespace trainrt::comm

#define TRAINRT_MPI_CHECK(call)                                                     \
    do {                                                                            \
        int trainrt_mpi_rc_ = (call);                                               \
        if (trainrt_mpi_rc_ != MPI_SUCCESS)                                         \
            ::trainrt::comm::throw_mpi_error(trainrt_mpi_rc_, #call, __FILE__, __LINE__); \
    } while (0)
