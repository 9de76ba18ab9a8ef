#include "launch/launcher.hpp"

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::launch {
namespace {

int parse_int(const EnvLookup& env, const std::string& name, int fallback) {
    auto value = env(name);
    if (!value) return fallback;
    try {
        std::size_t used = 0;
        int parsed = std::stoi(*value, &used);
        if (used == value->size()) return parsed;
    } catch (const std::exception&) {
    }
    throw LaunchError(fmt::format("launch: environment variable {}='{}' is not an integer; "
                                  "was this process started by a launcher that sets it?",
                                  name, *value));
}

void check_world(const LaunchInfo& info, const char* rank_var, const char* size_var) {
    if (info.world_size < 1 || info.world_rank < 0 || info.world_rank >= info.world_size)
        throw LaunchError(fmt::format("launch: {}={} and {}={} do not describe a valid rank; "
                                      "check the launcher's environment",
                                      rank_var, info.world_rank, size_var, info.world_size));
}

// SLURM_STEP_TASKS_PER_NODE / SLURM_TASKS_PER_NODE: "4", or "2(x3),1" (counts per node).
int tasks_on_node(const EnvLookup& env, int node_id) {
    auto list = env("SLURM_STEP_TASKS_PER_NODE");
    if (!list) list = env("SLURM_TASKS_PER_NODE");
    if (!list || node_id < 0) return -1;
    int node = 0;
    std::size_t at = 0;
    while (at < list->size()) {
        std::size_t used = 0;
        int count = std::stoi(list->substr(at), &used);
        at += used;
        int repeat = 1;
        if (list->compare(at, 2, "(x") == 0) {
            repeat = std::stoi(list->substr(at + 2), &used);
            at += 2 + used + 1;  // "(x" N ")"
        }
        if (node_id < node + repeat) return count;
        node += repeat;
        if (at < list->size() && (*list)[at] == ',') ++at;
    }
    return -1;
}

int slurm_local_size(const EnvLookup& env) {
    int size = parse_int(env, "SLURM_NTASKS_ON_NODE", -1);
    if (size >= 0) return size;
    try {
        return tasks_on_node(env, parse_int(env, "SLURM_NODEID", -1));
    } catch (const std::exception&) {
        return -1;  // an unexpected format: MPI's node-local view is used unchecked
    }
}

class EnvLauncher final : public Launcher {
public:
    explicit EnvLauncher(LaunchInfo info) : info_(std::move(info)) {}
    const LaunchInfo& info() const override { return info_; }

private:
    LaunchInfo info_;
};

// PMI-1/PMI-2 wire launchers (mpiexec's hydra, srun --mpi=pmi2): MPICH talks to them itself.
LaunchInfo pmi_info(const EnvLookup& env) {
    LaunchInfo info;
    info.mode = Mode::pmi;
    info.world_rank = parse_int(env, "PMI_RANK", 0);
    info.world_size = parse_int(env, "PMI_SIZE", 1);
    check_world(info, "PMI_RANK", "PMI_SIZE");
    // hydra sets MPI_LOCALRANKID; under srun, SLURM_LOCALID is right (hydra inside an
    // allocation also runs as srun tasks, but then MPI_LOCALRANKID is set too and wins).
    info.local_rank = parse_int(env, "MPI_LOCALRANKID", parse_int(env, "SLURM_LOCALID", -1));
    info.local_size = parse_int(env, "MPI_LOCALNRANKS", -1);
    if (info.local_size < 0 && env("SLURM_LOCALID")) info.local_size = slurm_local_size(env);
    return info;
}

LaunchInfo slurm_info(const EnvLookup& env) {
    LaunchInfo info;
    info.mode = Mode::slurm;
    info.world_rank = parse_int(env, "SLURM_PROCID", 0);
    info.world_size = parse_int(env, "SLURM_NTASKS", parse_int(env, "SLURM_NPROCS", 1));
    check_world(info, "SLURM_PROCID", "SLURM_NTASKS");
    info.local_rank = parse_int(env, "SLURM_LOCALID", -1);
    info.local_size = slurm_local_size(env);
    return info;
}

}  // namespace

const char* mode_name(Mode mode) {
    switch (mode) {
        case Mode::pmix: return "pmix";
        case Mode::pmi: return "pmi";
        case Mode::slurm: return "slurm";
        case Mode::single: return "single";
    }
    return "unknown";
}

EnvLookup process_env() {
    return [](const std::string& name) -> std::optional<std::string> {
        const char* value = std::getenv(name.c_str());
        if (value == nullptr) return std::nullopt;
        return std::string(value);
    };
}

Mode detect_mode(const EnvLookup& env) {
    if (env("PMIX_NAMESPACE") && env("PMIX_RANK")) return Mode::pmix;
    if (env("PMI_RANK") || env("PMI_FD") || env("PMI_PORT")) return Mode::pmi;
    if (env("SLURM_PROCID") && env("SLURM_STEP_ID")) return Mode::slurm;
    return Mode::single;
}

void read_slurm_job(const EnvLookup& env, LaunchInfo& info) {
    // An array task's own job id is what scontrol requeue and squeue accept.
    if (auto array_job = env("SLURM_ARRAY_JOB_ID"); array_job && env("SLURM_ARRAY_TASK_ID"))
        info.job_id = *array_job + "_" + *env("SLURM_ARRAY_TASK_ID");
    else
        info.job_id = env("SLURM_JOB_ID").value_or("");
    info.restart_count = parse_int(env, "SLURM_RESTART_COUNT", 0);
}

std::unique_ptr<Launcher> discover(const EnvLookup& env) {
    Mode mode = detect_mode(env);
    if (mode == Mode::pmix) return make_pmix_launcher(env);
    LaunchInfo info;
    if (mode == Mode::pmi) info = pmi_info(env);
    if (mode == Mode::slurm) info = slurm_info(env);
    read_slurm_job(env, info);
    return std::make_unique<EnvLauncher>(std::move(info));
}

}  // namespace trainrt::launch
