// The launcher for `srun --mpi=pmix`: rank discovery through PMIx, and a PMI-1 server thread that
// gives Debian's MPICH (simple PMI-1 client only, no PMIx) the world PMIx describes. Without it
// every MPICH rank would come up as a singleton, silently.
#include <pmix.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <limits>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "launch/launcher.hpp"
#include "launch/pmi1_server.hpp"
#include "launch/pmi1_socket.hpp"
#include "launch/pmix_client.hpp"
#include "launch/pmix_kvs.hpp"
#include "trainrt/error.hpp"
#include "log/log.hpp"

namespace trainrt::launch {
namespace {

// How long finish() waits for the server thread; it only takes long when the thread is stuck in a
// fence that other ranks will never join.
constexpr auto server_stop_timeout = std::chrono::seconds(5);

int to_int(std::int64_t value, const char* key) {
    if (value < 0 || value > std::numeric_limits<int>::max())
        throw LaunchError(fmt::format("launch: PMIx gave {} = {}, out of range", key, value));
    return static_cast<int>(value);
}

LaunchInfo query_world(const PmixClient& client) {
    LaunchInfo info;
    info.mode = Mode::pmix;
    info.world_rank = client.rank();
    info.world_size = to_int(client.job_number(PMIX_JOB_SIZE), PMIX_JOB_SIZE);
    info.local_rank = to_int(client.proc_number(client.rank(), PMIX_LOCAL_RANK), PMIX_LOCAL_RANK);
    info.local_size = to_int(client.job_number(PMIX_LOCAL_SIZE), PMIX_LOCAL_SIZE);
    info.node_id = to_int(client.proc_number(client.rank(), PMIX_NODEID), PMIX_NODEID);
    if (info.world_rank >= info.world_size || info.local_rank >= info.local_size)
        throw LaunchError(fmt::format("launch: PMIx says rank {} of {} (local {} of {}): "
                                      "not a valid rank", info.world_rank, info.world_size,
                                      info.local_rank, info.local_size));
    return info;
}

// What MPICH's simple PMI-1 client reads at PMI_Init. PMI_PORT/PMI_ID would make it connect
// elsewhere, PMI_SPAWNED would make it look for a parent, PMI_TOTALVIEW would make it wait for a
// debugger handshake.
void export_pmi_env(int client_fd, const LaunchInfo& info) {
    for (const char* name : {"PMI_PORT", "PMI_ID", "PMI_SPAWNED", "PMI_TOTALVIEW"})
        ::unsetenv(name);
    ::setenv("PMI_FD", std::to_string(client_fd).c_str(), 1);
    ::setenv("PMI_RANK", std::to_string(info.world_rank).c_str(), 1);
    ::setenv("PMI_SIZE", std::to_string(info.world_size).c_str(), 1);
}

void run_server(pmi1::Server& server, pmi1::UniqueFd fd, std::promise<void> done) {
    try {
        if (server.serve(fd.get()) == pmi1::ServeEnd::aborted)
            log::error("MPI aborted the job through PMI-1");
    } catch (const std::exception& error) {
        log::error("PMI-1 server stopped: {}", error.what());
    }
    fd.reset();  // a client still waiting for a reply now reads end of file
    done.set_value();
}

class PmixLauncher final : public Launcher {
public:
    explicit PmixLauncher(const EnvLookup& env)
        : client_(std::make_unique<PmixClient>()), info_(query_world(*client_)) {
        read_slurm_job(env, info_);
    }
    ~PmixLauncher() override { finish(); }

    const LaunchInfo& info() const override { return info_; }
    void prepare_mpi() override;
    void finish() noexcept override;

private:
    pmi1::JobFacts facts() const;
    bool stop_server() noexcept;
    void abandon_server() noexcept;

    std::unique_ptr<PmixClient> client_;
    LaunchInfo info_;
    std::unique_ptr<PmixKvs> kvs_;
    std::unique_ptr<pmi1::Server> server_;
    pmi1::UniqueFd client_end_;  // MPICH's end: PMI_FD
    std::thread thread_;
    std::future<void> served_;
    bool finished_ = false;
};

pmi1::JobFacts PmixLauncher::facts() const {
    pmi1::JobFacts facts;
    facts.rank = info_.world_rank;
    facts.size = info_.world_size;
    facts.kvsname = client_->nspace();
    facts.appnum = 0;  // Slurm runs a step (even --multi-prog) as one PMIx application
    facts.universe_size = info_.world_size;
    return facts;
}

void PmixLauncher::prepare_mpi() {
    if (server_) return;
    auto [server_end, client_end] = pmi1::make_socketpair();
    kvs_ = std::make_unique<PmixKvs>(*client_, info_.world_size);
    server_ = std::make_unique<pmi1::Server>(facts(), *kvs_);
    std::promise<void> done;
    served_ = done.get_future();
    thread_ = std::thread(run_server, std::ref(*server_), std::move(server_end), std::move(done));
    client_end_ = std::move(client_end);
    export_pmi_env(client_end_.get(), info_);
}

void PmixLauncher::finish() noexcept {
    if (finished_) return;
    finished_ = true;
    if (stop_server()) client_->finalize();
}

// True when the server thread has ended (or never started).
bool PmixLauncher::stop_server() noexcept {
    if (!thread_.joinable()) return true;
    server_->stop();
    if (served_.wait_for(server_stop_timeout) != std::future_status::ready) {
        abandon_server();
        return false;
    }
    thread_.join();
    // After `finalize` MPICH closes its end itself; closing it again could hit a reused number.
    if (server_->finalized()) (void)client_end_.release();
    client_end_.reset();
    return true;
}

// The thread is stuck inside PMIx (a fence other ranks never joined): leave it and everything it
// uses alive, and skip PMIx_Finalize, which would pull PMIx from under it. The process is ending.
void PmixLauncher::abandon_server() noexcept {
    log::warn("the PMI-1 server thread did not stop within {} s; leaving it (and PMIx) to process exit",
              static_cast<long long>(server_stop_timeout.count()));
    thread_.detach();
    (void)server_.release();
    (void)kvs_.release();
    (void)client_.release();
    (void)client_end_.release();
}

}  // namespace

std::unique_ptr<Launcher> make_pmix_launcher(const EnvLookup& env) {
    return std::make_unique<PmixLauncher>(env);
}

}  // namespace trainrt::launch
