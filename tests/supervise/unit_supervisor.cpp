// The supervisor's state machine, every transition, against a scripted Slurm (fake_slurm.hpp):
// no cluster, no sleeping. The same scenarios run on the real cluster in tests/slurm/.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "fake_slurm.hpp"
#include "runlog/events.hpp"
#include "runlog/heartbeats.hpp"
#include "supervise/supervisor.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;
using namespace trainrt::supervise;
using trainrt::testing::FakeClock;
using trainrt::testing::FakeProcess;
using trainrt::testing::FakeRanks;
using trainrt::testing::FakeSlurm;
using P = Phase;

namespace {

const std::vector<std::string> kAll = {"node1", "node2", "node3"};

struct Harness {
    std::filesystem::path dir;
    FakeClock clock;
    FakeSlurm slurm;
    FakeRanks ranks;
    FailureSettings settings = FailureSettings::defaults();
    Allocation allocation;
    bool ending = false;
    bool with_watcher = false;
    bool watcher_alive = true;
    std::vector<std::string> said;
    std::vector<std::string> watcher_nodes;
    std::vector<std::shared_ptr<bool>> watchers_stopped;  // one per watcher started
    std::vector<int> stopped_at_start;  // per watcher started: how many earlier ones were stopped then
    std::function<int()> watcher_body = [] { return 0; };
    std::vector<Phase> trace;
    NodeSet excluded;

    Harness() : dir(make_dir()), ranks(dir.string(), clock) {
        settings.peer_timeout.value = 30;
        allocation.job_id = "42";
        allocation.nodelist = "node[1-3]";
        allocation.nodes = kAll;
        allocation.tasks_per_node = 2;
        allocation.world_size = 6;
        allocation.host = allocation.node_name = "node1";
    }
    ~Harness() {
        std::error_code ignored;
        std::filesystem::remove_all(dir, ignored);
    }
    static std::filesystem::path make_dir() {
        static int counter = 0;
        auto path = std::filesystem::temp_directory_path() /
                    ("trainrt_supervise_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
        return path;
    }

    int run(std::optional<WatcherRole> role = {}) {
        auto launcher = srun_launcher(slurm, {"--mpi=pmix"}, {"trainrt", "--config", "job.ini"});
        SupervisorDeps deps{slurm, *launcher, clock, [this] { return ending; },
                            [this](const std::string& line) { said.push_back(line); }, nullptr};
        if (with_watcher)
            deps.start_watcher = [this](const std::string& node, const NodeSet&) {
                watcher_nodes.push_back(node);
                stopped_at_start.push_back(static_cast<int>(
                    std::count_if(watchers_stopped.begin(), watchers_stopped.end(), [](const auto& s) { return *s; })));
                watchers_stopped.push_back(std::make_shared<bool>(false));
                return std::unique_ptr<launch::Process>(
                    std::make_unique<FakeProcess>(watcher_body, watcher_alive, watchers_stopped.back()));
            };
        Supervisor supervisor(std::move(deps), allocation, {dir.string(), settings}, role);
        const int code = supervisor.run();
        trace = supervisor.trace();
        excluded = supervisor.excluded();
        return code;
    }

    // Steps: what their ranks do.
    void step_finishes(std::vector<std::string> hosts = kAll) {
        slurm.steps.push_back([this, hosts](const launch::StepRequest&) {
            ranks.start(hosts);
            ranks.finish();
            return 0;
        });
    }
    void step_killed(int code = 137) {  // a rank killed: the step ends without a record
        slurm.steps.push_back([this, code](const launch::StepRequest&) {
            ranks.start(kAll);
            return code;
        });
    }
    void step_exits(int code, std::function<void()> ranks_do = [] {}) {
        slurm.steps.push_back([code, ranks_do](const launch::StepRequest&) {
            ranks_do();
            return code;
        });
    }

    // The ranks of a step in which node2 hangs: its beat stops, the others beat 40 s later and
    // record a peer_timeout failure.
    void node2_hangs() {
        ranks.start(kAll);
        ranks.beat("node2", clock.now() + 1);
        clock.advance(40);
        ranks.beat("node1", clock.now());
        ranks.beat("node3", clock.now());
        ranks.fail(0, "peer_timeout");
    }

    std::vector<runlog::Event> events() const { return runlog::read_events(dir.string()).events; }
    int count(const char* kind) const {
        const auto all = events();
        return static_cast<int>(std::count_if(all.begin(), all.end(),
                                              [&](const runlog::Event& e) { return std::string(e.kind()) == kind; }));
    }
    template <class T> const T last() const {
        const auto all = events();
        for (auto e = all.rbegin(); e != all.rend(); ++e)
            if (auto body = e->as<T>()) return *body;
        FAIL("no such event");
        return T{};
    }
    bool said_line(const std::string& part) const {
        return std::any_of(said.begin(), said.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
    }
};

std::vector<std::string> srun_args(const launch::StepRequest& request) { return request.srun_options; }

bool has(const std::vector<std::string>& args, const std::string& arg) {
    return std::find(args.begin(), args.end(), arg) != args.end();
}

}  // namespace

TEST_CASE("supervise: a step that finishes: launch, watch, decide, leave 0", "[supervise]") {
    Harness h;
    h.step_finishes();
    CHECK(h.run() == 0);
    CHECK(h.trace == std::vector<Phase>{P::launch, P::watch, P::decide, P::leave});
    REQUIRE(h.slurm.launched.size() == 1);
    CHECK(srun_args(h.slurm.launched[0]) == std::vector<std::string>{"--kill-on-bad-exit=1", "--mpi=pmix"});
    CHECK(h.slurm.launched[0].command == std::vector<std::string>{"trainrt", "--config", "job.ini"});
    CHECK(h.slurm.launched[0].unset_env.empty());
    CHECK(h.count("relaunch") == 0);
    CHECK(h.said_line("step exited with status 0: done: training finished"));
}

TEST_CASE("supervise: a rank killed: failure recorded for it, relaunch after 1 s, then done", "[supervise]") {
    Harness h;
    h.step_killed();
    h.step_finishes();
    CHECK(h.run() == 0);
    CHECK(h.trace == std::vector<Phase>{P::launch, P::watch, P::decide, P::relaunch, P::launch, P::watch, P::decide,
                                        P::leave});
    CHECK(h.slurm.launched.size() == 2);
    CHECK(h.clock.slept == std::vector<double>{1});
    auto failure = h.last<runlog::FailureEvent>();
    CHECK(failure.reason == "unrecorded_end");
    CHECK(failure.exit_code == 137);
    auto relaunch = h.last<runlog::RelaunchEvent>();
    CHECK(relaunch.failures == 1);
    CHECK(relaunch.excluded_nodes.empty());
    CHECK(h.slurm.launched[1].srun_options == h.slurm.launched[0].srun_options);  // whole allocation again
    CHECK(h.said_line("step exited with status 137: relaunch: relaunching in 1 s after failure 1 of at most 3"));
}

TEST_CASE("supervise: a dead node: excluded, relaunched on the nodes left with an explicit geometry", "[supervise]") {
    Harness h;
    h.step_exits(137, [&] {
        h.ranks.start(kAll);
        h.slurm.states["node2"] = "down";
    });
    h.step_finishes({"node1", "node3"});
    CHECK(h.run() == 0);
    REQUIRE(h.slurm.launched.size() == 2);
    const auto& again = h.slurm.launched[1];
    CHECK(srun_args(again) == std::vector<std::string>{"--kill-on-bad-exit=1", "--mpi=pmix", "-N", "2",
                                                      "--ntasks-per-node=2", "-n", "4", "--exclude=node2",
                                                      "--overlap"});
    CHECK(has(again.unset_env, "SLURM_NTASKS"));
    CHECK(has(again.unset_env, "SLURM_TASKS_PER_NODE"));
    CHECK(h.last<runlog::RelaunchEvent>().excluded_nodes == std::vector<std::string>{"node2"});
    CHECK(h.excluded == NodeSet{"node2"});
    CHECK(h.slurm.probed.empty());
}

TEST_CASE("supervise: a hung node (silent heartbeat) is excluded while Slurm still calls it alive", "[supervise]") {
    Harness h;
    h.step_exits(4, [&] {
        h.node2_hangs();
    });
    h.step_finishes({"node1", "node3"});
    CHECK(h.run() == 0);
    CHECK(h.last<runlog::RelaunchEvent>().excluded_nodes == std::vector<std::string>{"node2"});
    CHECK(has(srun_args(h.slurm.launched[1]), "--exclude=node2"));
}

TEST_CASE("supervise: a node its heartbeats already call silent is not probed", "[supervise]") {
    Harness h;
    h.step_exits(4, [&] {
        h.node2_hangs();
        h.slurm.states["node2"] = "no_respond";  // Slurm's pings fail too, later
    });
    h.step_finishes({"node1", "node3"});
    CHECK(h.run() == 0);
    CHECK(h.slurm.probed.empty());
    CHECK(h.excluded == NodeSet{"node2"});
}

TEST_CASE("supervise: a node flagged not responding is probed: alive stays, dead goes", "[supervise]") {
    SECTION("alive") {
        Harness h;
        h.step_exits(137, [&] {
            h.ranks.start(kAll);
            h.slurm.states["node3"] = "no_respond";
        });
        h.step_exits(0, [&] {
            h.slurm.states.clear();  // its slurmd answers again
            h.ranks.start(kAll);
            h.ranks.finish();
        });
        CHECK(h.run() == 0);
        CHECK(h.slurm.probed == std::vector<std::string>{"node3"});
        CHECK(h.excluded.empty());
        CHECK(h.said_line("Slurm flags node3 not responding, but it runs a step: keeping it"));
    }
    SECTION("dead") {
        Harness h;
        h.slurm.dead = {"node3"};
        h.step_exits(137, [&] {
            h.ranks.start(kAll);
            h.slurm.states["node3"] = "no_respond";
        });
        h.step_finishes({"node1", "node2"});
        CHECK(h.run() == 0);
        CHECK(h.excluded == NodeSet{"node3"});
        CHECK(has(srun_args(h.slurm.launched[1]), "--exclude=node3"));
    }
}

TEST_CASE("supervise: a failure recorded and a node's Slurm daemon gone: decided without waiting for srun",
          "[supervise]") {
    Harness h;
    h.slurm.daemon_dead = {"node2"};
    h.step_exits(FakeProcess::kRunsOn, [&] {  // srun would wait KillWait for node2's tasks
        h.ranks.start(kAll);
        h.ranks.fail(0, "peer_lost");
    });
    h.step_finishes({"node1", "node3"});
    CHECK(h.run() == 0);
    CHECK(h.trace == std::vector<Phase>{P::launch, P::watch, P::decide, P::relaunch, P::launch, P::watch, P::decide,
                                        P::leave});
    auto asked = h.slurm.asked;
    std::sort(asked.begin(), asked.end());
    CHECK(asked == kAll);  // every node of the step, once: the answer came at the first ask
    CHECK(h.excluded == NodeSet{"node2"});
    CHECK(h.last<runlog::RelaunchEvent>().excluded_nodes == std::vector<std::string>{"node2"});
    CHECK(has(srun_args(h.slurm.launched[1]), "--exclude=node2"));
    CHECK(h.said_line("node2 is gone: its Slurm daemon does not answer"));
    CHECK(h.said_line("step exited with status 4: relaunch: relaunching in 0 s after failure 1 of at most 3"));
    // Polled every 0.1 s, asked 0.5 s after the failure record, relaunched at once.
    CHECK(std::all_of(h.clock.slept.begin(), h.clock.slept.end(), [](double s) { return s <= 0.1; }));
    double slept = 0;
    for (double s : h.clock.slept) slept += s;
    CHECK(slept == Approx(0.6).margin(0.11));
}

TEST_CASE("supervise: a failure recorded and a node's heartbeat silent: that node is gone, its daemon not asked",
          "[supervise]") {
    Harness h;
    h.step_exits(FakeProcess::kRunsOn, [&] {  // a hung node: its slurmd still accepts connections
        h.node2_hangs();
    });
    h.step_finishes({"node1", "node3"});
    CHECK(h.run() == 0);
    auto asked = h.slurm.asked;
    std::sort(asked.begin(), asked.end());
    CHECK(asked == std::vector<std::string>{"node1", "node3"});
    CHECK(h.excluded == NodeSet{"node2"});
    CHECK(h.said_line("node2 is gone: its heartbeat is silent"));
}

TEST_CASE("supervise: a step that runs on without a failure record is never asked about", "[supervise]") {
    Harness h;
    h.slurm.daemon_dead = {"node2"};
    h.step_exits(0, [&] {
        h.ranks.start(kAll);
        h.ranks.finish();
    });
    CHECK(h.run() == 0);
    CHECK(h.slurm.asked.empty());
}

TEST_CASE("supervise: launch failures back off 2, 4, 8 s apart from max_failures, then give up", "[supervise]") {
    Harness h;
    h.settings.max_launch_failures.value = 3;
    for (int i = 0; i < 4; ++i) h.step_exits(1);  // srun fails before trainrt starts
    CHECK(h.run() == exit_codes::failure_limit);
    CHECK(h.slurm.launched.size() == 4);
    CHECK(h.clock.slept == std::vector<double>{2, 4, 8});
    auto final = h.last<runlog::FailureEvent>();
    CHECK(final.final);
    CHECK(final.reason == "max_launch_failures");
    CHECK(h.trace.back() == P::leave);
}

TEST_CASE("supervise: srun that cannot be started is a launch failure too", "[supervise]") {
    Harness h;
    h.settings.max_launch_failures.value = 0;
    h.slurm.srun_missing = true;
    CHECK(h.run() == exit_codes::failure_limit);
    CHECK(h.said_line("cannot start srun"));
    CHECK(h.said_line("step exited with status 127: give_up"));
    CHECK(h.last<runlog::FailureEvent>().reason == "max_launch_failures");
}

TEST_CASE("supervise: the failure budget spent: give up with a final record, exit 10", "[supervise]") {
    Harness h;
    h.settings.max_failures.value = 1;
    h.step_killed();
    h.step_killed();
    CHECK(h.run() == exit_codes::failure_limit);
    CHECK(h.slurm.launched.size() == 2);
    auto final = h.last<runlog::FailureEvent>();
    CHECK(final.final);
    CHECK(final.reason == "max_failures");
    CHECK(h.said_line("give_up: giving up: 2 failure(s)"));
}

TEST_CASE("supervise: fewer nodes left than min_nodes: the job is requeued, not shrunk", "[supervise]") {
    Harness h;
    h.settings.min_nodes.value = 3;
    h.step_exits(137, [&] {
        h.ranks.start(kAll);
        h.slurm.states["node2"] = "down";
    });
    CHECK(h.run() == exit_codes::stopped);
    CHECK(h.trace == std::vector<Phase>{P::launch, P::watch, P::decide, P::requeue, P::leave});
    CHECK(h.slurm.requeued == std::vector<std::string>{"42"});
    CHECK(h.slurm.launched.size() == 1);
    CHECK(h.said_line("fewer than [failure] min_nodes = 3"));
}

TEST_CASE("supervise: a step that could not requeue itself (75) is requeued here", "[supervise]") {
    SECTION("requeued") {
        Harness h;
        h.step_exits(exit_codes::requeue_needed, [&] { h.ranks.start(kAll); h.ranks.stop(); });
        CHECK(h.run() == exit_codes::stopped);
        CHECK(h.slurm.requeued == std::vector<std::string>{"42"});
        CHECK(h.said_line("requeued job 42"));
    }
    SECTION("refused: no scontrol here either -> 75 for RequeueExit") {
        Harness h;
        h.slurm.scontrol_found = false;
        h.step_exits(exit_codes::requeue_needed, [&] { h.ranks.start(kAll); h.ranks.stop(); });
        CHECK(h.run() == exit_codes::requeue_needed);
        CHECK(h.slurm.requeued.empty());
        CHECK(h.said_line("cannot requeue job 42"));
    }
    SECTION("the job is being cancelled: not requeued") {
        Harness h;
        h.slurm.job.state = "COMPLETING";
        h.step_exits(exit_codes::requeue_needed, [&] { h.ranks.start(kAll); h.ranks.stop(); });
        CHECK(h.run() == exit_codes::stopped);
        CHECK(h.slurm.requeued.empty());
        CHECK(h.said_line("is ending"));
    }
}

TEST_CASE("supervise: stopped on request (9), interrupted (130) and bad input (2, 6) are never relaunched", "[supervise]") {
    SECTION("stopped: its stop record") {
        Harness h;
        h.step_exits(exit_codes::stopped, [&] { h.ranks.start(kAll); h.ranks.stop(); });
        CHECK(h.run() == exit_codes::stopped);
        CHECK(h.slurm.launched.size() == 1);
        CHECK(h.count("relaunch") == 0);
    }
    for (int code : {exit_codes::config, exit_codes::data}) {
        Harness h;
        h.step_exits(code);  // refused before it started: no start record
        CHECK(h.run() == code);
        CHECK(h.slurm.launched.size() == 1);
        CHECK(h.count("relaunch") == 0);
        CHECK(h.said_line("before it started"));
    }
    SECTION("interrupted (Ctrl-C): its stop record") {
        Harness h;
        h.step_exits(exit_codes::interrupted, [&] { h.ranks.start(kAll); h.ranks.stop(); });
        CHECK(h.run() == exit_codes::interrupted);
        CHECK(h.slurm.launched.size() == 1);
        CHECK(h.count("relaunch") == 0);
        CHECK(h.slurm.requeued.empty());
    }
    SECTION("a data error while training: the rank's record") {
        Harness h;
        h.step_exits(exit_codes::data, [&] { h.ranks.start(kAll); h.ranks.fail(0, "data"); });
        CHECK(h.run() == exit_codes::data);
        CHECK(h.count("relaunch") == 0);
    }
}

TEST_CASE("supervise: exit 9, 6 or 2 without the step's record is a killed rank (mpiexec's signal codes)",
          "[supervise]") {
    for (int code : {exit_codes::stopped, exit_codes::data, exit_codes::config}) {
        Harness h;
        h.step_killed(code);  // started, then ended with no record: SIGKILL, SIGABRT, SIGINT under mpiexec
        h.step_finishes();
        CHECK(h.run() == 0);
        CHECK(h.slurm.launched.size() == 2);
        CHECK(h.last<runlog::FailureEvent>().reason == "unrecorded_end");
    }
}

TEST_CASE("supervise: a failure while Slurm ends the job (TERM) is not relaunched", "[supervise]") {
    Harness h;
    h.step_exits(137, [&] {
        h.ranks.start(kAll);
        h.ending = true;
    });
    CHECK(h.run() == 137);
    CHECK(h.slurm.launched.size() == 1);
    CHECK(h.said_line("the job is ending"));
}

TEST_CASE("supervise: no node left: leave with the step's status", "[supervise]") {
    Harness h;
    h.allocation.nodes = {};  // Slurm could not expand the node list: min_nodes cannot be checked
    h.step_exits(137, [&] {
        h.ranks.start({"node1"});
        h.slurm.states["node1"] = "down";
    });
    CHECK(h.run() == 137);
    CHECK(h.said_line("no node of the allocation is left (excluded: node1)"));
}

TEST_CASE("supervise: several nodes: a watcher step on the last other node, replaced when exclusions change",
          "[supervise]") {
    Harness h;
    h.with_watcher = true;
    h.step_exits(137, [&] {
        h.ranks.start(kAll);
        h.slurm.states["node3"] = "down";  // the watcher's own node
    });
    h.step_finishes({"node1", "node2"});
    CHECK(h.run() == 0);
    CHECK(h.watcher_nodes == std::vector<std::string>{"node3", "node2"});
    REQUIRE(h.watchers_stopped.size() == 2);
    // The first one, on the lost node3, is not waited for before the relaunch; it is stopped, as
    // the second one is, when the supervisor leaves.
    CHECK(h.stopped_at_start == std::vector<int>{0, 0});
    CHECK(*h.watchers_stopped[0]);
    CHECK(*h.watchers_stopped[1]);
    CHECK(h.said_line("watcher for this batch host (node1) on node3"));
    CHECK(runlog::read_wrapper_beat(h.dir.string()).has_value());
    CHECK(h.slurm.cancelled.empty());
}

TEST_CASE("supervise: a watcher on a live node is stopped before its replacement starts", "[supervise]") {
    Harness h;
    h.with_watcher = true;
    h.step_exits(137, [&] {
        h.ranks.start(kAll);
        h.slurm.states["node2"] = "down";  // another node than the watcher's
    });
    h.step_finishes({"node1", "node3"});
    CHECK(h.run() == 0);
    CHECK(h.watcher_nodes == std::vector<std::string>{"node3", "node3"});
    CHECK(h.stopped_at_start == std::vector<int>{0, 1});
}

TEST_CASE("supervise: a watcher that took over while this supervisor hung gets the job", "[supervise]") {
    Harness h;
    h.with_watcher = true;
    h.watcher_body = [] { return 0; };  // the watcher's supervision ends the run
    h.step_exits(137, [&] {
        h.ranks.start(kAll);
        runlog::write_takeover(h.dir.string(), "node3", h.clock.now());
    });
    CHECK(h.run() == 0);
    CHECK(h.trace == std::vector<Phase>{P::launch, P::watch, P::leave});
    CHECK(h.count("relaunch") == 0);
    CHECK(h.said_line("took this job over while this batch host was silent"));
}

TEST_CASE("supervise: a takeover record of an earlier allocation, or without a live watcher, is dropped",
          "[supervise]") {
    SECTION("an earlier allocation's") {
        Harness h;
        runlog::write_takeover(h.dir.string(), "node3", h.clock.now());
        h.with_watcher = true;
        h.step_finishes();
        CHECK(h.run() == 0);
        CHECK_FALSE(runlog::read_takeover(h.dir.string()).has_value());
    }
    SECTION("its watcher is gone too") {
        Harness h;
        h.with_watcher = true;
        h.watcher_alive = false;
        h.step_exits(0, [&] {
            h.ranks.start(kAll);
            runlog::write_takeover(h.dir.string(), "node3", h.clock.now());
            h.ranks.finish();
        });
        CHECK(h.run() == 0);
        CHECK(h.trace == std::vector<Phase>{P::launch, P::watch, P::decide, P::leave});
        CHECK(h.said_line("a takeover by node3 is recorded, but no watcher of this job runs: going on here"));
        CHECK_FALSE(runlog::read_takeover(h.dir.string()).has_value());
    }
}

TEST_CASE("supervise: the batch host lost: the watcher takes over, relaunches without it, ends the job",
          "[supervise]") {
    Harness h;
    h.allocation.host = h.allocation.node_name = "node3";
    const double last_beat = h.clock.now();
    runlog::write_wrapper_beat(h.dir.string(), {"node1", last_beat - 5, last_beat});
    h.ranks.start(kAll);
    h.ranks.beat("node1", last_beat);  // the batch host's ranks, silent from now on
    h.step_finishes({"node2", "node3"});
    WatcherRole role{"node1", "node1", {}};
    CHECK(h.run(role) == 0);
    CHECK(h.trace == std::vector<Phase>{P::await_takeover, P::decide, P::relaunch, P::launch, P::watch, P::decide,
                                        P::leave});
    CHECK(runlog::read_takeover(h.dir.string()) == std::optional<std::string>("node3"));
    auto relaunch = h.last<runlog::RelaunchEvent>();
    CHECK(relaunch.took_over_from == "node1");
    CHECK(relaunch.excluded_nodes == std::vector<std::string>{"node1"});
    CHECK(has(srun_args(h.slurm.launched[0]), "--exclude=node1"));
    CHECK(h.slurm.cancelled == std::vector<std::string>{"42"});  // Slurm would keep it RUNNING
    CHECK(h.said_line("took over job 42 from the silent batch host node1"));
    CHECK(h.clock.now() - last_beat > h.settings.peer_timeout.value);
}

TEST_CASE("supervise: a watcher stopped before any takeover records nothing and leaves 0", "[supervise]") {
    Harness h;
    h.allocation.host = h.allocation.node_name = "node3";
    runlog::write_wrapper_beat(h.dir.string(), {"node1", h.clock.now(), h.clock.now() + 1e6});  // always alive
    h.ending = true;
    CHECK(h.run(WatcherRole{"node1", "node1", {}}) == 0);
    CHECK(h.trace == std::vector<Phase>{P::await_takeover, P::leave});
    CHECK_FALSE(runlog::read_takeover(h.dir.string()).has_value());
    CHECK(h.slurm.cancelled.empty());
    CHECK(h.slurm.launched.empty());
}

TEST_CASE("supervise: outside Slurm a requeue verdict is exit 75", "[supervise]") {
    Harness h;
    h.allocation = Allocation{};
    h.allocation.host = h.allocation.node_name = "laptop";
    h.step_exits(exit_codes::requeue_needed, [&] { h.ranks.start({"laptop"}); h.ranks.stop(); });
    CHECK(h.run() == exit_codes::requeue_needed);
    CHECK(h.said_line("not a Slurm job"));
}

TEST_CASE("supervise: relaunch geometry and the watcher's node", "[supervise]") {
    Allocation a;
    a.nodes = kAll;
    a.tasks_per_node = 4;
    a.host = a.node_name = "node1";
    CHECK(relaunch_geometry(a, {})->empty());
    CHECK(*relaunch_geometry(a, {"node1", "node3"}) ==
          std::vector<std::string>{"-N", "1", "--ntasks-per-node=4", "-n", "4", "--exclude=node1,node3", "--overlap"});
    CHECK_FALSE(relaunch_geometry(a, {"node1", "node2", "node3"}).has_value());
    CHECK(watcher_node(a, {}) == "node3");
    CHECK(watcher_node(a, {"node3"}) == "node2");
    CHECK(watcher_node(a, {"node2", "node3"}).empty());
    CHECK(first_task_count("2(x3)") == 2);
    CHECK(first_task_count("4,2(x2)") == 4);
    CHECK(first_task_count("") == 1);
    CHECK(NodeSet::parse("node3,,node1,node3").str() == "node1,node3");
}
