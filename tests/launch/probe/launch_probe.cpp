// launch_probe: discovers the world through trainrt's launch layer, initialises MPI and prints
// one JSON line per rank with both views, so a test can check that they agree under every way
// of starting it (mpiexec, srun --mpi=pmi2, srun --mpi=pmix, plain). Other modes, for tests:
//   --pmi1-kvs        check the PMI-1 key-value space instead of starting MPI (pmi1_kvs_check.hpp)
//   --no-mpi          print the launcher's view only, never starting MPI
//   --abort-rank N    rank N calls MPI_Abort(3) after MPI_Init
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "launch/launcher.hpp"
#include "pmi1_kvs_check.hpp"
#include "trainrt/error.hpp"

namespace {

std::string host_name() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
    return name;
}

// MPI's view, checked call by call (the probe has no communicator wrapper of its own).
// mpi_local_rank/size: MPI's own node-local communicator, built from the node map the launcher
// gave MPICH (PMI_process_mapping).
nlohmann::ordered_json mpi_view() {
    int rank = -1, size = -1, sum = -1, local_rank = -1, local_size = -1;
    MPI_Comm local = MPI_COMM_NULL;
    if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
        MPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS ||
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local) !=
            MPI_SUCCESS ||
        MPI_Comm_rank(local, &local_rank) != MPI_SUCCESS ||
        MPI_Comm_size(local, &local_size) != MPI_SUCCESS || MPI_Comm_free(&local) != MPI_SUCCESS)
        throw trainrt::CommError("launch_probe: an MPI call failed");
    return {{"mpi_rank", rank},         {"mpi_size", size},           {"allreduce_sum", sum},
            {"mpi_local_rank", local_rank}, {"mpi_local_size", local_size}};
}

nlohmann::ordered_json launcher_view(const trainrt::launch::LaunchInfo& info) {
    return {{"launcher", trainrt::launch::mode_name(info.mode)},
            {"launcher_rank", info.world_rank},
            {"launcher_size", info.world_size},
            {"local_rank", info.local_rank},
            {"local_size", info.local_size}};
}

// The launcher's view alone, without MPI: prepare_mpi() followed by finish() must still stop
// the PMI-1 server cleanly when MPI never connects to it.
int run_without_mpi(trainrt::launch::Launcher& launcher) {
    std::cout << launcher_view(launcher.info()).dump() << std::endl;
    launcher.finish();
    return 0;
}

// Rank `rank` calls MPI_Abort(3) after MPI_Init; the launcher must end the whole job.
int run_abort(int rank) {
    int mine = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &mine);
    if (mine == rank) MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Barrier(MPI_COMM_WORLD);  // the others wait here until they are killed
    std::fprintf(stderr, "launch_probe: rank %d survived MPI_Abort\n", mine);
    return 1;
}

int run(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    auto launcher = trainrt::launch::discover(trainrt::launch::process_env());
    launcher->prepare_mpi();
    if (mode == "--no-mpi") return run_without_mpi(*launcher);
    if (mode == "--pmi1-kvs") {
        std::cout << run_pmi1_kvs_check(launcher->info()).dump() << std::endl;
        launcher->finish();
        return 0;
    }
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) throw trainrt::CommError("MPI_Init failed");
    if (mode == "--abort-rank" && argc > 2) return run_abort(std::atoi(argv[2]));
    nlohmann::ordered_json line = launcher_view(launcher->info());
    line.update(mpi_view());
    line["host"] = host_name();
    std::cout << line.dump() << std::endl;
    MPI_Finalize();
    launcher->finish();
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const trainrt::Error& error) {
        std::fprintf(stderr, "launch_probe: %s\n", error.what());
        return error.exit_code();
    }
}
