// tune/sweep_runner: a sweep's trials are started as the supervisor's steps are
// (supervise/step_launcher.hpp): inside an allocation, each trial's srun is a StepRequest to the
// SlurmClient, here a scripted one.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "fake_slurm.hpp"
#include "launch/process.hpp"
#include "runlog/sweep_record.hpp"
#include "temp_run_dir.hpp"
#include "trainrt/error.hpp"
#include "tune/sweep_runner.hpp"

using namespace trainrt;
using Strings = std::vector<std::string>;
using trainrt::testing::FakeSlurm;
using trainrt::testing::TempRunDir;

namespace {

// Two FIFO trials of 2 ranks compared by "acc", `tune_lines` added to [tune], on a fashion_mlp
// base job whose run directory is DIR/sweep; their files in `dir`.
tune::SweepConfig sweep_in(const TempRunDir& dir, const std::string& tune_lines = "") {
    std::ofstream(dir.path() / "base.ini") << "[run]\nworkload = fashion_mlp\nseed = 3\nstorage_path = " << dir.str()
                                           << "\nname = sweep\n[train]\nepochs = 1\n";
    std::ofstream(dir.path() / "sweep.ini") << "[tune]\nbase = base.ini\nmetric = acc\nnum_samples = 2\n"
                                               "ranks_per_trial = 2\n" << tune_lines << "[space]\ntrain.lr = choice(0.1)\n";
    const std::string path = (dir.path() / "sweep.ini").string();
    const char* argv[] = {"trainrt-tune", "--config", path.c_str()};
    return tune::load_sweep(3, argv);
}

// 3 nodes x 2 tasks, as `sbatch -N 3 --ntasks-per-node=2`: a trial of 2 ranks per node.
supervise::Allocation allocation_of_three() {
    supervise::Allocation allocation;
    allocation.job_id = "42";
    allocation.nodelist = "node[1-3]";
    allocation.nodes = {"node1", "node2", "node3"};
    allocation.tasks_per_node = 2;
    allocation.world_size = 6;
    return allocation;
}

}  // namespace

TEST_CASE("tune: inside an allocation each trial is a step the SlurmClient starts", "[tune]") {
    TempRunDir dir;
    const tune::SweepConfig sweep = sweep_in(dir);
    const std::string sweep_dir = tune::sweep_dir(sweep);
    FakeSlurm slurm;
    for (int i = 0; i < 2; ++i) slurm.steps.push_back([](const launch::StepRequest&) { return 0; });
    const tune::SweepPlacement placement = tune::place_trials(sweep, 6, allocation_of_three());
    REQUIRE(placement.use_srun);

    CHECK(tune::run_sweep(sweep, placement, slurm) == exit_codes::finished);

    REQUIRE(slurm.launched.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
        const launch::StepRequest& step = slurm.launched[i];
        const std::string trial = "trial_000" + std::to_string(i), node = "node" + std::to_string(i + 1);
        // launch::step_command's head (less srun itself), the launcher's --kill-on-bad-exit, the slot's nodes.
        CHECK(step.srun_options == Strings{"--kill-on-bad-exit=1", "--exact", "-n", "2", "--mpi=pmix",
                                           "--nodelist=" + node, "-N", "1", "--ntasks-per-node=2"});
        CHECK(step.command == Strings{launch::own_program(), "--config", sweep.base_path, "--train.lr=0.1",
                                      "--checkpoint.score_attribute=acc", "--checkpoint.score_order=max",
                                      "--run.storage_path=" + sweep_dir, "--run.name=" + trial,
                                      "--failure.requeue=never", "--metrics.progress=off"});
        CHECK(step.output_path == sweep_dir + "/" + trial + ".out");
        CHECK(step.unset_env.empty());  // the batch environment's task counts, as before: srun -n wins
        CHECK(step.set_env.empty());    // inside an allocation Slurm's binding sets the threads (trial_threads.hpp)
    }
    for (const runlog::TrialRecord& trial : runlog::load_state(sweep_dir).trials)
        CHECK(trial.status == runlog::TrialStatus::terminated);
}

TEST_CASE("tune: a failed trial is started again as the same step on the slot it freed", "[tune]") {
    TempRunDir dir;
    const tune::SweepConfig sweep = sweep_in(dir, "max_failures_per_trial = 1\n");
    FakeSlurm slurm;
    slurm.steps.push_back([](const launch::StepRequest&) { return 1; });
    for (int i = 0; i < 2; ++i) slurm.steps.push_back([](const launch::StepRequest&) { return 0; });

    CHECK(tune::run_sweep(sweep, tune::place_trials(sweep, 6, allocation_of_three()), slurm) == exit_codes::finished);

    REQUIRE(slurm.launched.size() == 3);
    CHECK(slurm.launched[2].srun_options == slurm.launched[0].srun_options);
    CHECK(slurm.launched[2].command == slurm.launched[0].command);
    CHECK(slurm.launched[2].output_path == slurm.launched[0].output_path);  // appended to
    const runlog::SweepState state = runlog::load_state(tune::sweep_dir(sweep));
    CHECK(state.trials.at(0).attempts == 2);
    CHECK(state.trials.at(0).status == runlog::TrialStatus::terminated);
}
