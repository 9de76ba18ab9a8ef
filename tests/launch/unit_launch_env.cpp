#include <catch2/catch.hpp>

#include "fake_env.hpp"

#include <map>

#include "comm/mpi_world.hpp"
#include "launch/launcher.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;

namespace {
launch::EnvLookup fake(std::map<std::string, std::string> vars) { return testing::fake_env(std::move(vars)); }
}  // namespace

TEST_CASE("mode is decided from the environment, PMIx first", "[launch]") {
    CHECK(launch::detect_mode(fake({{"PMIX_NAMESPACE", "x"}, {"PMIX_RANK", "0"}, {"PMI_RANK", "0"}})) ==
          launch::Mode::pmix);
    CHECK(launch::detect_mode(fake({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}})) == launch::Mode::pmi);
    CHECK(launch::detect_mode(fake({{"SLURM_PROCID", "0"}, {"SLURM_STEP_ID", "3"}})) ==
          launch::Mode::slurm);
    CHECK(launch::detect_mode(fake({{"SLURM_PROCID", "0"}})) == launch::Mode::single);  // batch shell
    CHECK(launch::detect_mode(fake({})) == launch::Mode::single);
}

TEST_CASE("hydra's variables give rank, size and local rank", "[launch]") {
    auto launcher = launch::discover(fake({{"PMI_RANK", "3"}, {"PMI_SIZE", "4"},
                                           {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"}}));
    const auto& info = launcher->info();
    CHECK(info.world_rank == 3);
    CHECK(info.world_size == 4);
    CHECK(info.local_rank == 1);
    CHECK(info.local_size == 2);
}

TEST_CASE("srun's variables give local size from SLURM_STEP_TASKS_PER_NODE", "[launch]") {
    auto base = std::map<std::string, std::string>{{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "7"},
                                                   {"SLURM_STEP_ID", "0"}, {"SLURM_LOCALID", "0"},
                                                   {"SLURM_JOB_ID", "42"}, {"SLURM_RESTART_COUNT", "2"},
                                                   {"SLURM_STEP_TASKS_PER_NODE", "2(x3),1"}};
    base["SLURM_NODEID"] = "2";
    auto info = launch::discover(fake(base))->info();
    CHECK(info.mode == launch::Mode::slurm);
    CHECK(info.local_size == 2);
    CHECK(info.job_id == "42");
    CHECK(info.restart_count == 2);
    base["SLURM_NODEID"] = "3";
    CHECK(launch::discover(fake(base))->info().local_size == 1);
}

TEST_CASE("array jobs are named JOB_TASK", "[launch]") {
    auto info = launch::discover(fake({{"SLURM_JOB_ID", "101"}, {"SLURM_ARRAY_JOB_ID", "100"},
                                       {"SLURM_ARRAY_TASK_ID", "1"}}))->info();
    CHECK(info.job_id == "100_1");
}

TEST_CASE("inconsistent launcher variables are launch errors", "[launch]") {
    CHECK_THROWS_AS(launch::discover(fake({{"PMI_RANK", "4"}, {"PMI_SIZE", "4"}})), LaunchError);
    CHECK_THROWS_AS(launch::discover(fake({{"PMI_RANK", "x"}, {"PMI_SIZE", "4"}})), LaunchError);
}

TEST_CASE("a world mismatch says what disagrees and how to launch", "[launch]") {
    launch::LaunchInfo info;
    info.mode = launch::Mode::slurm;
    info.world_rank = 2;
    info.world_size = 4;
    CHECK_THROWS_WITH(comm::verify_world(info, 0, 1), Catch::Contains("came up as a singleton") &&
                                                           Catch::Contains("srun --mpi=pmix"));
    CHECK_THROWS_WITH(comm::verify_world(info, 1, 2), Catch::Contains("rank 2 of 4") &&
                                                           Catch::Contains("rank 1 of 2"));
    CHECK_NOTHROW(comm::verify_world(info, 2, 4));
}
