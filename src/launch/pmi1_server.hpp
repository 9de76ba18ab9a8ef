#pragma once
// A PMI-1 server for one client on a connected socket: answers the commands MPICH 4.0's simple
// PMI-1 client sends (src/pmi/simple/simple_pmi.c) from fixed job facts and a key-value/fence
// Backend. The PMIx launcher runs one in a thread, so that MPICH, which has no PMIx client, sees
// the world srun --mpi=pmix started. Protocol summary (client → server reply):
//   cmd=init pmi_version=1 pmi_subversion=1  → cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0
//   cmd=get_maxes                            → cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024
//   cmd=get_appnum                           → cmd=appnum appnum=N
//   cmd=get_my_kvsname                       → cmd=my_kvsname kvsname=NAME
//   cmd=get_universe_size                    → cmd=universe_size size=N
//   cmd=put kvsname=K key=KEY value=V        → cmd=put_result rc=0 msg=success
//   cmd=get kvsname=K key=KEY                → cmd=get_result rc=0 msg=success value=V
//                                              (rc=-1 msg=... when there is no such key)
//   cmd=barrier_in                           → cmd=barrier_out        (after Backend::fence)
//   cmd=finalize                             → cmd=finalize_ack
//   cmd=abort exitcode=N                     → no reply: Backend::abort, then the socket closes
//   cmd=initack pmiid=N (PMI_PORT start-up)  → cmd=initack / cmd=set size= / rank= / debug=0
//   mcmd=spawn ... endcmd (several lines)    → cmd=spawn_result rc=-1 (spawn is not supported)
// Anything that fails (a malformed line, an unknown command, a backend error) is answered
// `cmd=error rc=-1 msg=...`: a reply name the client does not expect, so the PMI call it made
// returns PMI_FAIL (the simple client ignores rc on barrier_out). The reason goes to stderr.
#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "launch/pmi1_socket.hpp"
#include "launch/pmi1_wire.hpp"

namespace trainrt::launch::pmi1 {

// Limits announced by get_maxes (the values MPICH's hydra announces).
inline constexpr int kvsname_max = 256;
inline constexpr int keylen_max = 64;
inline constexpr int vallen_max = 1024;
// The longest value the client accepts from a get: it shrinks vallen_max so that a put line fits
// its 1024-byte buffer (1024 - kvsname_max - keylen_max - 30), less its terminating NUL.
inline constexpr std::size_t client_value_limit = 1024 - kvsname_max - keylen_max - 30 - 1;

// What the server answers by itself.
struct JobFacts {
    int rank = 0;
    int size = 1;
    std::string kvsname = "kvs_0";
    int appnum = 0;
    int universe_size = 1;
};

// The key-value space behind the server; called from the server's thread only.
class Backend {
public:
    virtual ~Backend() = default;
    // Stores key=value as this rank's; others may read it after the next fence.
    virtual void put(const std::string& key, const std::string& value) = 0;
    // Collective over all ranks: publishes this rank's puts and waits for every rank's.
    virtual void fence() = 0;
    // The value stored under `key` by this rank or by any rank before the last fence.
    virtual std::optional<std::string> get(const std::string& key) = 0;
    // PMI_process_mapping (see pmi1_mapping.hpp); std::nullopt when unknown.
    virtual std::optional<std::string> process_mapping() = 0;
    // Ends the whole job. May return; the server then closes the connection.
    virtual void abort(int exit_code) = 0;
};

enum class ServeEnd { client_closed, aborted, stopped };

// Receives the reason of every failed command; the default prints it to stderr.
using ErrorLog = std::function<void(const std::string&)>;

class Server {
public:
    Server(JobFacts facts, Backend& backend, ErrorLog log = {});
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Serves the client on `fd` until it closes its end, aborts, or stop() is called. Throws
    // LaunchError only when the socket itself fails.
    ServeEnd serve(int fd);
    // Makes serve() return soon (after the command in progress). Safe from any thread.
    void stop() noexcept;
    // Whether the client has sent `finalize` (it then closes its end of the socket itself).
    bool finalized() const noexcept { return finalized_.load(); }

private:
    bool wait_readable(int fd);
    std::string respond(const std::string& line);
    std::string dispatch(const Message& request);
    std::string on_init(const Message& request);
    std::string on_initack(const Message& request);
    std::string on_put(const Message& request);
    std::string on_get(const Message& request);
    std::string on_barrier(const Message& request);
    std::string on_abort(const Message& request);
    std::string on_spawn_line(const std::string& line);
    std::string on_finalize();
    std::optional<std::string> lookup(const std::string& key);
    void check_kvsname(const Message& request) const;
    std::string error_reply(const std::string& what) const;

    JobFacts facts_;
    Backend& backend_;
    ErrorLog log_;
    UniqueFd wake_read_;
    UniqueFd wake_write_;
    std::atomic<bool> finalized_{false};
    bool aborted_ = false;
    bool in_spawn_ = false;      // inside an `mcmd=spawn` ... `endcmd` block
    bool last_spawn_ = false;    // that block is the last one before spawn_result
    std::string last_total_spawns_;
};

}  // namespace trainrt::launch::pmi1
