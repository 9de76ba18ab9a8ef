// Where a sweep's trials run in an allocation and what a lost node takes away
// (tune/trial_nodes.hpp), against a scripted Slurm.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "fake_slurm.hpp"
#include "runlog/clock.hpp"
#include "runlog/heartbeats.hpp"
#include "temp_run_dir.hpp"
#include "tune/trial_nodes.hpp"

using namespace trainrt;
using Strings = std::vector<std::string>;

namespace {

// N nodes x T tasks, as `sbatch -N N --ntasks-per-node=T`.
supervise::Allocation allocation_of(int nodes, int tasks_per_node) {
    supervise::Allocation allocation;
    allocation.job_id = "42";
    allocation.nodelist = "node[1-" + std::to_string(nodes) + "]";
    for (int i = 1; i <= nodes; ++i) allocation.nodes.push_back("node" + std::to_string(i));
    allocation.tasks_per_node = tasks_per_node;
    allocation.world_size = nodes * tasks_per_node;
    return allocation;
}

void quiet(const std::string&) {}

}  // namespace

TEST_CASE("tune: trial slots from the ranks, the configured limit, and the ranks left", "[tune]") {
    CHECK(tune::trial_slots(0, 6, 6, 2) == 3);
    CHECK(tune::trial_slots(0, 1, 1, 2) == 1);   // fewer ranks than a trial: one at a time still
    CHECK(tune::trial_slots(4, 2, 2, 2) == 4);   // the configured limit wins while nothing is lost
    CHECK(tune::trial_slots(0, 6, 4, 2) == 2);   // a node of 2 tasks lost
    CHECK(tune::trial_slots(4, 6, 4, 2) == 2);   // no more than fit once a node is lost
    CHECK(tune::trial_slots(0, 6, 2, 4) == 0);   // not one trial of 4 fits on the node left
}

TEST_CASE("tune: node slots keep a trial on as few nodes as it can", "[tune]") {
    CHECK(tune::node_slots(allocation_of(3, 2), 2) == std::vector<Strings>{{"node1"}, {"node2"}, {"node3"}});
    CHECK(tune::node_slots(allocation_of(2, 4), 2) == std::vector<Strings>{{"node1"}, {"node1"}, {"node2"}, {"node2"}});
    CHECK(tune::node_slots(allocation_of(5, 2), 4) == std::vector<Strings>{{"node1", "node2"}, {"node3", "node4"}});
    CHECK(tune::node_slots(allocation_of(3, 2), 3).empty());  // neither divides: Slurm places them
    supervise::Allocation uneven = allocation_of(3, 2);
    uneven.world_size = 5;  // "2(x2),1"
    CHECK(tune::node_slots(uneven, 1).empty());
}

TEST_CASE("tune: placed trials take free slots and give them back", "[tune]") {
    tune::TrialNodes nodes(allocation_of(3, 2), 6, 2, 0);
    CHECK(nodes.slots() == 3);
    CHECK(nodes.take() == 0u);
    CHECK(nodes.take() == 1u);
    CHECK(nodes.srun_options(1) == Strings{"--nodelist=node2", "-N", "1", "--ntasks-per-node=2"});
    CHECK(nodes.take() == 2u);
    CHECK(!nodes.take());
    nodes.give_back(1);
    CHECK(nodes.take() == 1u);

    tune::TrialNodes wide(allocation_of(4, 2), 8, 4, 0);
    CHECK(wide.take() == 0u);
    CHECK(wide.srun_options(0) == Strings{"--nodelist=node1,node2", "-N", "2", "--ntasks-per-node=2"});

    tune::TrialNodes limited(allocation_of(3, 2), 6, 2, 1);  // max_concurrent_trials = 1
    CHECK(limited.take() == 0u);
    CHECK(!limited.take());
    tune::TrialNodes more(allocation_of(1, 2), 2, 2, 3);  // more at once than the nodes hold: Slurm shares them
    CHECK(more.take() == 0u);
    CHECK(more.take() == 0u);
    CHECK(more.srun_options(0).empty());
}

TEST_CASE("tune: a node whose daemon is gone takes its slot away, not another's", "[tune]") {
    testing::FakeSlurm slurm;
    tune::TrialNodes nodes(allocation_of(3, 2), 6, 2, 0);
    for (int i = 0; i < 3; ++i) nodes.take();
    slurm.daemon_dead = {"node2"};
    Strings said;
    CHECK(nodes.check_after_failure(slurm, [&](const std::string& line) { said.push_back(line); }).str() == "node2");
    REQUIRE(!said.empty());
    CHECK(said.back().find("node2 lost") != std::string::npos);
    CHECK(said.back().find("2 trial(s) at once, 3 before") != std::string::npos);
    CHECK(nodes.touches_lost({"node2"}));
    CHECK(!nodes.touches_lost({"node1", "node3"}));
    nodes.give_back(1);   // the lost node's trial ended: its slot is not offered again
    CHECK(!nodes.take());
    nodes.give_back(0);
    CHECK(nodes.take() == 0u);

    slurm.asked.clear();  // a second failure: node2 is not asked again, nothing new is lost
    CHECK(nodes.check_after_failure(slurm, quiet).empty());
    CHECK(std::find(slurm.asked.begin(), slurm.asked.end(), "node2") == slurm.asked.end());
    CHECK(nodes.slots() == 2);
}

TEST_CASE("tune: a trial that failed on live nodes takes no slot away", "[tune]") {
    testing::FakeSlurm slurm;
    slurm.states = {{"node3", "no_respond"}};  // flagged for a moment, but its probe step runs
    tune::TrialNodes nodes(allocation_of(3, 2), 6, 2, 0);
    CHECK(nodes.check_after_failure(slurm, quiet).empty());
    CHECK(nodes.slots() == 3);
    CHECK(slurm.probed == Strings{"node3"});
}

TEST_CASE("tune: nodes Slurm reports down or failing their probe are lost; Slurm-placed trials exclude them", "[tune]") {
    testing::FakeSlurm slurm;
    slurm.states = {{"node1", "down"}, {"node3", "no_respond"}};
    slurm.dead = {"node3"};
    tune::TrialNodes nodes(allocation_of(3, 2), 6, 3, 0);  // 3 ranks on nodes of 2: Slurm places the trials
    CHECK(nodes.slots() == 2);
    CHECK(nodes.check_after_failure(slurm, quiet).str() == "node1,node3");
    CHECK(nodes.slots() == 0);  // 2 ranks left: not one trial of 3 fits
    CHECK(nodes.srun_options(0) == Strings{"--exclude=node1,node3"});
}

TEST_CASE("tune: a trial's silent host is lost only when its daemon does not answer", "[tune]") {
    testing::FakeSlurm slurm;
    testing::TempRunDir run;
    tune::TrialNodes nodes(allocation_of(3, 2), 6, 2, 0);
    const double now = runlog::now_seconds();
    runlog::write_heartbeat(run.str(), "node2", now - 30);  // silent for 30 s, peer_timeout 10 s
    CHECK(nodes.check_silent(slurm, {"node2"}, run.str(), now - 60, 10, quiet).empty());  // its daemon answers
    slurm.daemon_dead = {"node2"};
    CHECK(nodes.check_silent(slurm, {"node2"}, run.str(), now - 60, 0, quiet).empty());   // no heartbeats
    runlog::write_heartbeat(run.str(), "node2", now);
    CHECK(nodes.check_silent(slurm, {"node2"}, run.str(), now - 60, 10, quiet).empty());  // beating
    runlog::write_heartbeat(run.str(), "node2", now - 30);
    CHECK(nodes.check_silent(slurm, {"node2"}, run.str(), now - 60, 10, quiet).str() == "node2");
    CHECK(nodes.slots() == 2);
}
