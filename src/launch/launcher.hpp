#pragma once
// Rank discovery: who launched us and what world the launcher promised. Decided from the
// environment alone (PMIx_Init is only tried when PMIX_NAMESPACE/PMIX_RANK are set, because a
// failed PMIx_Init leaves a thread and fds behind).
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace trainrt::launch {

enum class Mode { pmix, pmi, slurm, single };
const char* mode_name(Mode mode);

// Looks up an environment variable; std::nullopt when unset. Injected so tests can fake one.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_env();

Mode detect_mode(const EnvLookup& env);

// What the launcher says about this process, before MPI exists.
struct LaunchInfo {
    Mode mode = Mode::single;
    int world_rank = 0;
    int world_size = 1;
    int local_rank = -1;   // -1: the launcher does not say
    int local_size = -1;
    int node_id = -1;      // -1: the launcher does not say (PMIx's PMIX_NODEID when it does)
    std::string job_id;
    int restart_count = 0;
};

class Launcher {
public:
    virtual ~Launcher() = default;
    virtual const LaunchInfo& info() const = 0;
    // Called right before MPI_Init: e.g. the PMIx launcher starts its PMI-1 server for MPICH.
    virtual void prepare_mpi() {}
    // Called after MPI_Finalize: stop helper threads, finalize PMIx. Never throws.
    virtual void finish() noexcept {}
};

// Reads SLURM_JOB_ID / SLURM_ARRAY_* and SLURM_RESTART_COUNT into `info`.
void read_slurm_job(const EnvLookup& env, LaunchInfo& info);

// Discovers from `env`; throws LaunchError naming the variable when the environment is
// inconsistent (e.g. PMI_RANK >= PMI_SIZE).
std::unique_ptr<Launcher> discover(const EnvLookup& env);

// Implemented in pmix_launcher.cpp: PMIx_Init, job size, local rank/size, node id; serves
// MPICH's PMI-1 wire protocol from PMIx data so MPI_Init sees the right world.
std::unique_ptr<Launcher> make_pmix_launcher(const EnvLookup& env);

}  // namespace trainrt::launch
