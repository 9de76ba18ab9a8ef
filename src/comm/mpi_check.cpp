#include "comm/mpi_check.hpp"

#include <mpi.h>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::comm {

void throw_mpi_error(int code, const char* call, const char* file, int line) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
    throw CommError(fmt::format("MPI call {} failed ({}:{}): {}", call, file, line,
                                length > 0 ? std::string(text, length) : "unknown MPI error"));
}

}  // namespace trainrt::comm
