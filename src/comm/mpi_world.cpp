#include "comm/mpi_world.hpp"

#include <cstdlib>

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "comm/mpi_check.hpp"
#include "trainrt/error.hpp"

namespace trainrt::comm {

MpiRuntime::MpiRuntime(launch::Launcher& launcher) : launcher_(launcher) {
    launcher_.prepare_mpi();
    int provided = 0;
    // MULTIPLE: a helper thread may serve collectives while the main thread runs its own (the
    // LibTorch process group's communication thread). Where MPI gives less, such helpers run
    // their collectives on the caller's thread instead (threads_supported()).
    TRAINRT_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided));
    TRAINRT_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
}

MpiRuntime::~MpiRuntime() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
    launcher_.finish();
}

void verify_world(const launch::LaunchInfo& info, int mpi_rank, int mpi_size) {
    if (info.world_rank == mpi_rank && info.world_size == mpi_size) return;
    const char* mode = launch::mode_name(info.mode);
    if (mpi_size == 1 && info.world_size > 1)
        throw LaunchError(fmt::format(
            "launch: {} started {} tasks (this is task {}), but MPI_Init came up as a singleton "
            "(rank 0 of 1): MPI was not given the launcher's world. Launch with `srun --mpi=pmix`, "
            "`srun --mpi=pmi2` or `mpiexec -n {}`",
            mode, info.world_size, info.world_rank, info.world_size));
    throw LaunchError(fmt::format(
        "launch: {} says this is rank {} of {}, but MPI says rank {} of {}; launch with "
        "`srun --mpi=pmix`, `srun --mpi=pmi2` or `mpiexec -n N`, not a mix of launchers",
        mode, info.world_rank, info.world_size, mpi_rank, mpi_size));
}

namespace {

constexpr std::size_t kHostBytes = 256;

std::vector<std::string> gather_hostnames(int size) {
    std::array<char, kHostBytes> mine{};
    if (gethostname(mine.data(), mine.size() - 1) != 0) std::strcpy(mine.data(), "unknown");
    std::vector<char> all(kHostBytes * static_cast<std::size_t>(size));
    TRAINRT_MPI_CHECK(MPI_Allgather(mine.data(), kHostBytes, MPI_CHAR, all.data(), kHostBytes,
                                    MPI_CHAR, MPI_COMM_WORLD));
    std::vector<std::string> names;
    for (int r = 0; r < size; ++r) names.emplace_back(all.data() + kHostBytes * r);
    return names;
}

void check_local(const launch::LaunchInfo& info, const Context& context) {
    bool rank_ok = info.local_rank < 0 || info.local_rank == context.local_rank;
    bool size_ok = info.local_size < 0 || info.local_size == context.local_size;
    if (rank_ok && size_ok) return;
    throw LaunchError(fmt::format(
        "launch: {} says local rank {} of {} on {}, but MPI's node-local communicator says {} of {}",
        launch::mode_name(info.mode), info.local_rank, info.local_size, context.hostname,
        context.local_rank, context.local_size));
}

}  // namespace

Context build_context(const launch::LaunchInfo& info) {
    Context context;
    TRAINRT_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &context.world_rank));
    TRAINRT_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &context.world_size));
    verify_world(info, context.world_rank, context.world_size);

    // Ranks on the same host share a node; node ranks follow the first rank seen on each host.
    std::vector<std::string> by_rank = gather_hostnames(context.world_size);
    context.hostname = by_rank[context.world_rank];
    for (const std::string& host : by_rank)
        if (std::find(context.hostnames.begin(), context.hostnames.end(), host) ==
            context.hostnames.end())
            context.hostnames.push_back(host);
    context.num_nodes = static_cast<int>(context.hostnames.size());
    context.node_rank = static_cast<int>(
        std::find(context.hostnames.begin(), context.hostnames.end(), context.hostname) -
        context.hostnames.begin());
    context.local_rank = 0;
    context.local_size = 0;
    for (int r = 0; r < context.world_size; ++r) {
        if (by_rank[r] != context.hostname) continue;
        if (r < context.world_rank) ++context.local_rank;
        ++context.local_size;
    }
    check_local(info, context);
    context.job_id = info.job_id;
    context.restart_count = info.restart_count;
    context.launcher = launch::mode_name(info.mode);
    return context;
}

bool threads_supported() {
    int provided = MPI_THREAD_SINGLE;
    TRAINRT_MPI_CHECK(MPI_Query_thread(&provided));
    return provided >= MPI_THREAD_MULTIPLE;
}

void abort_job(int exit_code) {
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);  // MPI_Abort returned (it should not): end this rank at least
}

}  // namespace trainrt::comm
