// The PMI-1 server loop over a real socketpair, against an in-memory backend, speaking the lines
// MPICH 4.0's simple PMI-1 client sends.
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "launch/pmi1_server.hpp"
#include "launch/pmi1_socket.hpp"
#include "trainrt/error.hpp"

using namespace trainrt::launch::pmi1;
using namespace std::chrono_literals;

namespace {

// A one-rank key-value space: puts become readable at the next fence, as PMI-1 promises others.
class MemoryBackend final : public Backend {
public:
    void put(const std::string& key, const std::string& value) override { staged[key] = value; }
    void fence() override {
        if (fail_fence) throw trainrt::LaunchError("fence failed on purpose");
        for (auto& [key, value] : staged) visible[key] = value;
        staged.clear();
        ++fences;
    }
    std::optional<std::string> get(const std::string& key) override {
        auto it = visible.find(key);
        if (it == visible.end()) return std::nullopt;
        return it->second;
    }
    std::optional<std::string> process_mapping() override { return mapping; }
    void abort(int exit_code) override { aborted_with = exit_code; }

    std::map<std::string, std::string> staged, visible;
    int fences = 0;
    bool fail_fence = false;
    std::optional<int> aborted_with;
    std::optional<std::string> mapping = std::string("(vector,(0,1,4))");
};

JobFacts facts() {
    JobFacts facts;
    facts.rank = 2;
    facts.size = 4;
    facts.kvsname = "slurm.pmix.7.0";
    facts.appnum = 0;
    facts.universe_size = 4;
    return facts;
}

// A server thread on one end of a socketpair; the test is the client on the other.
struct Session {
    Session() : sockets(make_socketpair()), reader(sockets.second.get()) {
        server = std::make_unique<Server>(facts(), backend, [this](const std::string& what) {
            std::lock_guard<std::mutex> lock(log_mutex);
            log.push_back(what);
        });
        ended = std::async(std::launch::async, [this] { return server->serve(sockets.first.get()); });
    }
    ~Session() {
        server->stop();
        if (ended.valid()) ended.wait();
    }

    void send(const std::string& bytes) { write_all(sockets.second.get(), bytes); }
    std::optional<std::string> read_line() {
        while (true) {
            if (auto line = reader.take_line()) return line;
            if (!reader.fill()) return std::nullopt;
        }
    }
    std::string ask(const std::string& line) {
        send(line + "\n");
        auto reply = read_line();
        REQUIRE(reply);
        return *reply;
    }
    ServeEnd end_within(std::chrono::milliseconds timeout) {
        REQUIRE(ended.wait_for(timeout) == std::future_status::ready);
        return ended.get();
    }

    MemoryBackend backend;
    std::pair<UniqueFd, UniqueFd> sockets;
    LineReader reader;
    std::unique_ptr<Server> server;
    std::future<ServeEnd> ended;
    std::mutex log_mutex;
    std::vector<std::string> log;
};

}  // namespace

TEST_CASE("pmi1 server answers MPICH's start-up sequence", "[pmi1]") {
    Session session;
    CHECK(session.ask("cmd=init pmi_version=1 pmi_subversion=1") ==
          "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0");
    CHECK(session.ask("cmd=get_maxes") == "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024");
    CHECK(session.ask("cmd=get_appnum") == "cmd=appnum appnum=0");
    CHECK(session.ask("cmd=get_my_kvsname") == "cmd=my_kvsname kvsname=slurm.pmix.7.0");
    CHECK(session.ask("cmd=get_universe_size") == "cmd=universe_size size=4");
    CHECK(session.ask("cmd=get kvsname=slurm.pmix.7.0 key=PMI_process_mapping") ==
          "cmd=get_result rc=0 msg=success value=(vector,(0,1,4))");
}

TEST_CASE("pmi1 server refuses other PMI versions in its init reply", "[pmi1]") {
    Session session;
    CHECK(session.ask("cmd=init pmi_version=2 pmi_subversion=0") ==
          "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1");
}

TEST_CASE("pmi1 server: put, barrier, get", "[pmi1]") {
    Session session;
    CHECK(session.ask("cmd=put kvsname=slurm.pmix.7.0 key=-allgather-1-2 value=0A0B") ==
          "cmd=put_result rc=0 msg=success");
    CHECK(session.ask("cmd=put kvsname=slurm.pmix.7.0 key=-bcast-1-0 value=segments=2") ==
          "cmd=put_result rc=0 msg=success");
    CHECK(session.ask("cmd=get kvsname=slurm.pmix.7.0 key=-allgather-1-2") ==
          "cmd=get_result rc=-1 msg=key_-allgather-1-2_not_found");
    CHECK(session.ask("cmd=barrier_in") == "cmd=barrier_out");
    CHECK(session.ask("cmd=get kvsname=slurm.pmix.7.0 key=-allgather-1-2") ==
          "cmd=get_result rc=0 msg=success value=0A0B");
    CHECK(session.ask("cmd=get kvsname=slurm.pmix.7.0 key=-bcast-1-0") ==
          "cmd=get_result rc=0 msg=success value=segments=2");
    CHECK(session.backend.fences == 1);
}

TEST_CASE("pmi1 server: a mapping the client could not hold is reported missing", "[pmi1]") {
    Session session;
    session.backend.mapping = "(vector" + std::string(client_value_limit, '0') + ")";
    CHECK(session.ask("cmd=get kvsname=slurm.pmix.7.0 key=PMI_process_mapping") ==
          "cmd=get_result rc=-1 msg=key_PMI_process_mapping_not_found");
    session.backend.mapping.reset();
    CHECK(session.ask("cmd=get kvsname=slurm.pmix.7.0 key=PMI_process_mapping").find("rc=-1") !=
          std::string::npos);
}

TEST_CASE("pmi1 server answers failures with cmd=error and goes on", "[pmi1]") {
    Session session;
    CHECK(session.ask("garbage").rfind("cmd=error rc=-1 msg=", 0) == 0);
    CHECK(session.ask("cmd=publish_name service=x port=y").rfind("cmd=error rc=-1", 0) == 0);
    CHECK(session.ask("cmd=get kvsname=other key=a").rfind("cmd=error rc=-1", 0) == 0);
    CHECK(session.ask("cmd=put kvsname=slurm.pmix.7.0 value=1").rfind("cmd=error rc=-1", 0) == 0);
    session.backend.fail_fence = true;
    CHECK(session.ask("cmd=barrier_in").rfind("cmd=error rc=-1 msg=fence_failed_on_purpose", 0) ==
          0);
    session.backend.fail_fence = false;
    CHECK(session.ask("cmd=barrier_in") == "cmd=barrier_out");
    std::lock_guard<std::mutex> lock(session.log_mutex);
    REQUIRE(session.log.size() == 5);
    CHECK_THAT(session.log[0], Catch::Contains("malformed") && Catch::Contains("garbage"));
    CHECK_THAT(session.log[1], Catch::Contains("publish_name"));
    CHECK_THAT(session.log[2], Catch::Contains("kvsname 'other'"));
}

TEST_CASE("pmi1 server ignores blank lines", "[pmi1]") {
    Session session;
    session.send("\n   \n");
    CHECK(session.ask("cmd=get_appnum") == "cmd=appnum appnum=0");
}

TEST_CASE("pmi1 server reassembles split and batched commands", "[pmi1]") {
    Session session;
    session.send("cmd=get_");
    std::this_thread::sleep_for(10ms);
    session.send("appnum\ncmd=barrier_in\n");
    CHECK(session.read_line() == "cmd=appnum appnum=0");
    CHECK(session.read_line() == "cmd=barrier_out");
}

TEST_CASE("pmi1 server: finalize, then the client closes", "[pmi1]") {
    Session session;
    CHECK_FALSE(session.server->finalized());
    CHECK(session.ask("cmd=finalize") == "cmd=finalize_ack");
    CHECK(session.server->finalized());
    session.sockets.second.reset();
    CHECK(session.end_within(2s) == ServeEnd::client_closed);
}

TEST_CASE("pmi1 server: abort ends the job and the conversation", "[pmi1]") {
    Session session;
    session.send("cmd=abort exitcode=7\n");
    CHECK(session.end_within(2s) == ServeEnd::aborted);
    CHECK(session.backend.aborted_with == 7);
}

TEST_CASE("pmi1 server: stop() ends serving while the client is quiet", "[pmi1]") {
    Session session;
    CHECK(session.ask("cmd=get_appnum") == "cmd=appnum appnum=0");
    session.server->stop();
    CHECK(session.end_within(2s) == ServeEnd::stopped);
}

TEST_CASE("pmi1 server: PMI_PORT-style initack", "[pmi1]") {
    Session session;
    CHECK(session.ask("cmd=initack pmiid=2") == "cmd=initack");
    CHECK(session.read_line() == "cmd=set size=4");
    CHECK(session.read_line() == "cmd=set rank=2");
    CHECK(session.read_line() == "cmd=set debug=0");
}

TEST_CASE("pmi1 server: spawn is refused once, after the last block", "[pmi1]") {
    Session session;
    auto block = [](int so_far) {
        return "mcmd=spawn\nnprocs=1\nexecname=/bin/true\ntotspawns=2\nspawnssofar=" +
               std::to_string(so_far) + "\narg1=has a space\nargcnt=1\npreput_num=0\n"
               "info_num=0\nendcmd\n";
    };
    session.send(block(1) + block(2));
    CHECK(session.read_line() == "cmd=spawn_result rc=-1 msg=spawn_not_supported");
    CHECK(session.ask("cmd=get_appnum") == "cmd=appnum appnum=0");
}
