#include "runtime/run_job.hpp"

#include <unistd.h>

#include <iostream>

#include <fmt/format.h>

#include "comm/agreement.hpp"
#include "comm/mpi_communicator.hpp"
#include "comm/mpi_world.hpp"
#include "config/loader.hpp"
#include "launch/launcher.hpp"
#include "runtime/gpu_setup.hpp"
#include "runtime/lifecycle.hpp"
#include "runtime/run_end_hook.hpp"
#include "runtime/scheduler_pause.hpp"
#include "runtime/session_impl.hpp"
#include "runtime/stop_criteria.hpp"
#include "runtime/watchdog.hpp"
#include "storage/posix.hpp"
#include "runlog/clock.hpp"
#include "runlog/events.hpp"
#include "runlog/history.hpp"
#include "runlog/run_dir.hpp"
#include "runlog/run_files.hpp"
#include "trainrt/error.hpp"
#include "log/log.hpp"

namespace trainrt::runtime {
namespace {

// This rank's start-up checks: the workload (a plugin is loaded here), its keys, its preflight
// and the GPU. A non-trainrt exception from a preflight is the workload's.
void check_locally(Context& context, const Settings& settings,
                   const workloads::Workload*& workload, JobConfig& effective) {
    try {
        if (workload == nullptr) workload = &workloads::find(settings.run.workload.value);
        if (!workload->any_train_key)  // a plugin's declared keys are known only now
            effective = config::with_train_keys(effective, workload->train_keys, workload->name);
        if (workload->preflight) workload->preflight(effective, context);
        stop_criteria(settings.stop);  // their ConfigErrors before any file is written
        pause_points(settings.stop);
        context.gpu_device = bind_gpu(settings.scaling, context);
    } catch (const Error&) {
        throw;
    } catch (const std::exception& error) {
        throw WorkloadError(fmt::format("workload {}: preflight: {}", workload != nullptr ? workload->name : "?",
                                        error.what()));
    }
}

// Collective: the start-up checks run on every rank before the run directory is touched, and a
// failure on any rank becomes every rank's.
void check_start(Communicator& comm, Context& context, const Settings& settings,
                 const workloads::Workload*& workload, JobConfig& effective) {
    comm::agree(comm, comm::attempt([&] { check_locally(context, settings, workload, effective); }));
}

// The stall_s of the record's last `count` checkpoints, oldest first.
std::vector<double> recent_checkpoint_stalls(const runlog::History& history, std::size_t count) {
    std::vector<double> stalls;
    for (auto event = history.events.rbegin(); event != history.events.rend() && stalls.size() < count; ++event)
        if (const auto* saved = event->as<runlog::CheckpointEvent>()) stalls.insert(stalls.begin(), saved->stall_s);
    return stalls;
}

// A run started again under the name of a finished one resumes it from its last checkpoint (a
// sweep's promoted trial does so on purpose, with more epochs); a function that ends where it
// ended before then trains nothing more. Said once, with how to start anew.
void warn_if_finished(const runlog::History& history, const std::string& run_dir) {
    if (history.last_end != "finish") return;
    const auto* finish = runlog::find_after<runlog::FinishEvent>(history, 0, false);
    log::warn("{} finished before ({} reports): this run resumes it from its last checkpoint (a function that "
              "ends where it ended then trains nothing more); give another run.name (Ray: RunConfig(name=...)) to "
              "start a new run",
              run_dir, finish != nullptr ? finish->as<runlog::FinishEvent>()->iterations : 0);
}

// Rank 0 prepares the run directory, checks the failure budget and records the start; every
// rank learns the outcome, so all fail together with rank 0's error. Rank 0 hands its checkpoint
// clock the run's earlier checkpoint costs and failures.
void agree_on_run_dir(SessionImpl& session, const JobConfig& config, const Context& context,
                      const Settings& settings) {
    std::exception_ptr failure;
    if (context.world_rank == 0)
        failure = comm::attempt([&] {
            runlog::prepare_run_dir(context.run_dir, config, settings.run, context);
            const runlog::History history = begin_attempt(context.run_dir, context, settings);
            warn_if_finished(history, context.run_dir);
            session.stops().recall_checkpoint_costs(recent_checkpoint_stalls(history, 3));
            session.stops().recall_mtbf(runtime::job_mtbf(settings.failure.mtbf.value, context.num_nodes,
                                                          history.failures_recorded,
                                                          runlog::attempts_seconds(history)));
            runlog::append(context.run_dir, context,
                           runlog::StartEvent{context.hostnames, context.launcher, settings.run.workload.value,
                                              history.last_end.empty() ? "first start" : "after " + history.last_end,
                                              history.last_end, history.failures, settings.failure.max_failures.value,
                                              runlog::process_start_seconds()});
        });
    comm::agree(session.communicator(), failure);
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
    log::info("finished: {} reports in {:.2f} s on {} ranks{}; run dir {} (trainrt results {})",
              session.results().iterations(), session.results().total_seconds(), context.world_size, metrics,
              context.run_dir, context.run_dir);
}

// Errors every rank raises identically (`everyone`) are printed once (rank 0) and end the job
// normally; any other error on one rank takes the whole job down, so no rank waits forever in a
// collective.
int fail(const Error& error, const Context& context, bool everyone) {
    everyone = everyone || error.on_all_ranks();
    if (!everyone || context.world_rank == 0)
        log::error("{}", error.what());
    const bool recorded = dynamic_cast<const FailureLimitError*>(&error) != nullptr;
    if (!recorded && !context.run_dir.empty() &&
        storage::path_exists(runlog::path_in(context.run_dir, runlog::kEvents)) && (!everyone || context.world_rank == 0)) {
        try {
            runlog::append(context.run_dir, context,
                           runlog::FailureEvent{context.world_rank, error.what(), error.domain(), error.exit_code(),
                                                "", false, std::nullopt});
        } catch (const Error&) {
        }
    }
    if (!everyone && context.world_size > 1) {
        // The launcher forwards output asynchronously and drops what is in flight when the abort
        // tears the job down: a moment for this rank's line to get out (the event is on disk).
        ::usleep(200 * 1000);
        comm::abort_job(error.exit_code());
    }
    return error.exit_code();
}

// Collective, after the workload returned on a stop: rank 0 records it and requeues; every rank
// exits with rank 0's code.
int end_run_stopped(SessionImpl& session, const Context& context,
                    const Settings& settings) {
    StopSummary stop{session.stops().request(), session.results().iterations(),
                     session.stop_checkpoint(), {}};
    stop.boundaries_by_rank.resize(static_cast<std::size_t>(context.world_size));
    const std::int64_t mine = session.stops().request().boundary;
    session.communicator().allgather(&mine, stop.boundaries_by_rank.data(), sizeof mine);
    std::int64_t code = 0;
    if (context.world_rank == 0) code = end_stopped(context, settings, stop);
    session.communicator().broadcast(&code, sizeof code, 0);
    return static_cast<int>(code);
}

int train(SessionImpl& session, const workloads::Workload& workload, const Context& context,
          const Settings& settings) {
    const double peer_timeout = settings.failure.peer_timeout.value;
    Watchdog watchdog({settings.failure.collective_timeout.value, peer_timeout}, context,
                      [&session] { return session.where(); },
                      peer_timeout > 0 && settings.failure.peer_links.value
                          ? open_peer_links(session.communicator(), context)
                          : nullptr);
    workload.run(session);
    session.end_resume();
    session.end_progress();
    session.finish_checkpoints();
    if (session.stopped() && !ends_as_finished(session.stops().request().reason))
        return end_run_stopped(session, context, settings);
    if (context.world_rank == 0)
        runlog::append(context.run_dir, context, runlog::FinishEvent{session.results().iterations()});
    print_summary(session, context);
    return 0;
}

// The run after its start: the workload's exit code, or its failure's.
int train_or_fail(SessionImpl& session, const workloads::Workload& workload, const Context& context,
                  const Settings& settings) {
    try {
        return train(session, workload, context, settings);
    } catch (const Error& error) {
        session.end_progress();
        return fail(error, context, false);
    } catch (const std::exception& error) {  // the training function's own exceptions
        session.end_progress();
        return fail(WorkloadError(fmt::format("workload {}: {}", workload.name, error.what())), context, false);
    }
}

}  // namespace

int run_job(const JobConfig& config, const Settings& settings,
            const workloads::Workload* embedded) {
    auto launcher = launch::discover(launch::process_env());
    comm::MpiRuntime mpi(*launcher);
    Context context;
    context.world_rank = launcher->info().world_rank;
    log::set_rank(context.world_rank);
    std::unique_ptr<Communicator> comm;
    try {
        context = comm::build_context(launcher->info());
        context.run_dir = runlog::run_dir_path(settings.run);
        comm = comm::make_world_communicator();
    } catch (const Error& error) {
        return fail(error, context, false);  // ranks may disagree on who they are
    }
    const workloads::Workload* workload = embedded;
    JobConfig effective = config;
    try {
        check_start(*comm, context, settings, workload, effective);
    } catch (const Error& error) {
        return fail(error, context, true);
    }
    try {
        comm = session_communicator(settings.scaling, context, std::move(comm));
    } catch (const Error& error) {
        return fail(error, context, error.on_all_ranks());  // else NCCL failed here: abort the rest
    }
    std::unique_ptr<SessionImpl> session;
    try {
        session = std::make_unique<SessionImpl>(effective, settings, context, std::move(comm));
        agree_on_run_dir(*session, effective, context, settings);
        session->restore();
        session->stops().watch_time_limit();
    } catch (const Error& error) {
        return fail(error, context, true);
    }
    const int code = train_or_fail(*session, *workload, context, settings);
    if (context.world_rank == 0) call_run_end_hook(settings, context.run_dir);
    return code;
}

}  // namespace trainrt::runtime
