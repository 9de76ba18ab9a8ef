#include <catch2/catch.hpp>

#include "launch/step_command.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;
using launch::StepLauncher;
using Argv = std::vector<std::string>;

TEST_CASE("a step's launcher command: srun with PMIx inside Slurm, mpiexec outside") {
    CHECK(launch::step_command(StepLauncher::mpiexec, {4}) == Argv{"mpiexec", "-n", "4"});
    CHECK(launch::step_command(StepLauncher::srun, {2}) == Argv{"srun", "-n", "2", "--mpi=pmix"});
    CHECK(launch::step_command(StepLauncher::srun, {1, true, true}) ==
          Argv{"srun", "--exact", "-n", "1", "--mpi=pmix", "--kill-on-bad-exit=1"});
    CHECK(launch::step_command(StepLauncher::mpiexec, {3, true, true}) == Argv{"mpiexec", "-n", "3"});
}

TEST_CASE("launchers by name; another is refused naming both") {
    CHECK(launch::step_launcher_named("srun") == StepLauncher::srun);
    CHECK(launch::step_launcher_named("mpiexec") == StepLauncher::mpiexec);
    CHECK_THROWS_AS(launch::step_launcher_named("mpirun"), ConfigError);
    CHECK_THROWS_WITH(launch::step_launcher_named("mpirun"), Catch::Contains("neither srun nor mpiexec"));
}
