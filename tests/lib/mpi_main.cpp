// Catch2 under MPI: every rank runs every test; a failure on any rank fails the ctest.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <mpi.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    Catch::Session session;
    int status = session.applyCommandLine(argc, argv);
    if (rank != 0) session.configData().outputFilename = "%debug";  // only rank 0 prints
    if (status == 0) status = session.run();
    int worst = 0;
    MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst;
}
