#include "runtime/run_job.hpp"

#include <cblas.h>
#include <mpi.h>

#include <iostream>

#include <fmt/format.h>

#include "comm/mpi_communicator.hpp"
#include "comm/mpi_world.hpp"
#include "comm/strings.hpp"
#include "launch/launcher.hpp"
#include "runtime/session_impl.hpp"
#include "storage/posix.hpp"
#include "storage/run_dir.hpp"
#include "trainrt/error.hpp"

namespace trainrt::runtime {
namespace {

// Rank 0 prepares the run directory; every rank learns the outcome, so all fail together.
void agree_on_run_dir(Communicator& comm, const JobConfig& config, const Context& context) {
    std::string failure;
    if (context.world_rank == 0) {
        try {
            storage::prepare_run_dir(context.run_dir, config, context);
            storage::append_event(context.run_dir, "start", context,
                                  {{"hosts", context.hostnames}, {"launcher", context.launcher},
                                   {"workload", config.get("run.workload")}});
        } catch (const Error& error) {
            failure = error.what();
        }
    }
    failure = comm::broadcast_string(comm, failure, 0);
    if (!failure.empty()) throw StorageError(failure);
}

void print_summary(const SessionImpl& session, const Context& context) {
    if (context.world_rank != 0) return;
    const auto& last = session.results().last();
    std::string metrics;
    for (const char* key : {"epoch", "loss", "test_accuracy"})
        if (last.contains(key))
            metrics += last[key].is_number_float()
                           ? fmt::format(", {} {:.4f}", key, last[key].get<double>())
                           : fmt::format(", {} {}", key, last[key].dump());
    std::cout << fmt::format("[trainrt] finished: {} reports in {:.2f} s on {} ranks{}; run dir {}",
                             session.results().iterations(), session.results().total_seconds(),
                             context.world_size, metrics, context.run_dir)
              << std::endl;
}

// Errors every rank raises identically (`everyone`) are printed once (rank 0) and end the job
// normally; any other error on one rank takes the whole job down, so no rank waits forever in a
// collective.
int fail(const Error& error, const Context& context, bool everyone) {
    everyone = everyone || error.on_all_ranks();
    if (!everyone || context.world_rank == 0)
        storage::write_stderr_line(fmt::format("trainrt: rank {}: {}", context.world_rank, error.what()));
    if (!context.run_dir.empty() && storage::path_exists(context.run_dir + "/events.jsonl") &&
        (!everyone || context.world_rank == 0)) {
        try {
            storage::append_event(context.run_dir, "failure", context,
                                  {{"rank", context.world_rank}, {"message", error.what()},
                                   {"exit_code", error.exit_code()}});
        } catch (const Error&) {
        }
    }
    if (!everyone && context.world_size > 1) MPI_Abort(MPI_COMM_WORLD, error.exit_code());
    return error.exit_code();
}

}  // namespace

int run_job(const JobConfig& config, const workloads::Workload& workload) {
    auto launcher = launch::discover(launch::process_env());
    comm::MpiRuntime mpi(*launcher);
    Context context;
    context.world_rank = launcher->info().world_rank;
    try {
        context = comm::build_context(launcher->info());
        context.run_dir = storage::run_dir_path(config);
        if (workload.preflight) workload.preflight(config, context);
    } catch (const LaunchError& error) {
        return fail(error, context, false);  // ranks may disagree on who they are
    } catch (const Error& error) {
        return fail(error, context, true);
    }
    openblas_set_num_threads(1);  // one core per rank, like PyTorch's default here
    std::unique_ptr<SessionImpl> session;
    try {
        session = std::make_unique<SessionImpl>(config, context,
                                                comm::make_mpi_communicator(MPI_COMM_WORLD));
        agree_on_run_dir(session->communicator(), config, context);
        session->restore();
    } catch (const Error& error) {
        return fail(error, context, true);
    }
    try {
        workload.run(*session);
        session->finish_checkpoints();
        if (context.world_rank == 0)
            storage::append_event(context.run_dir, "finish", context,
                                  {{"iterations", session->results().iterations()}});
        print_summary(*session, context);
        return 0;
    } catch (const Error& error) {
        return fail(error, context, false);
    }
}

}  // namespace trainrt::runtime
