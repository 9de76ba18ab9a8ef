// supervise/step_launcher: what a launcher asks the SlurmClient for (srun) or runs (mpiexec), with
// and without a geometry, and what a step gets besides its command line (its output file and
// environment, a sweep's trials).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fake_slurm.hpp"
#include "supervise/step_launcher.hpp"

using namespace trainrt;
using Strings = std::vector<std::string>;
using trainrt::testing::FakeSlurm;

namespace {

Strings joined(Strings first, const Strings& second) {
    first.insert(first.end(), second.begin(), second.end());
    return first;
}

}  // namespace

TEST_CASE("supervise: the srun launcher's step request", "[supervise]") {
    FakeSlurm slurm;
    for (int i = 0; i < 2; ++i) slurm.steps.push_back([](const launch::StepRequest&) { return 0; });
    const auto launcher = supervise::srun_launcher(slurm, {"--mpi=pmix"}, {"trainrt", "--config", "job.ini"});

    CHECK(launcher->launch({})->wait() == 0);
    CHECK(launcher->launch({"-N", "2", "--exclude=node3"})->wait() == 0);

    REQUIRE(slurm.launched.size() == 2);
    CHECK(slurm.launched[0].srun_options == Strings{"--kill-on-bad-exit=1", "--mpi=pmix"});
    CHECK(slurm.launched[0].command == Strings{"trainrt", "--config", "job.ini"});
    CHECK(slurm.launched[0].unset_env.empty());
    CHECK(slurm.launched[0].output_path.empty());  // the job's output
    CHECK(slurm.launched[0].set_env.empty());
    CHECK(slurm.launched[1].srun_options == Strings{"--kill-on-bad-exit=1", "--mpi=pmix", "-N", "2", "--exclude=node3"});
    CHECK(slurm.launched[1].unset_env == launch::allocation_task_counts());
    CHECK(launcher->describe({"-N", "2"}) == "srun --kill-on-bad-exit=1 --mpi=pmix -N 2 trainrt --config job.ini");
}

TEST_CASE("supervise: a step's output file and environment reach its step request", "[supervise]") {
    FakeSlurm slurm;
    for (int i = 0; i < 2; ++i) slurm.steps.push_back([](const launch::StepRequest&) { return 0; });
    const auto launcher = supervise::srun_launcher(slurm, {"--exact", "-n", "2"}, {"trainrt"},
                                                   {{"NOT_THIS"}, "/sweep/trial_0000.out", {"OMP_NUM_THREADS=1"}});

    CHECK(launcher->launch({})->wait() == 0);
    CHECK(launcher->launch({"-N", "1"})->wait() == 0);

    REQUIRE(slurm.launched.size() == 2);
    for (const launch::StepRequest& request : slurm.launched) {
        CHECK(request.output_path == "/sweep/trial_0000.out");
        CHECK(request.set_env == Strings{"OMP_NUM_THREADS=1"});
    }
    CHECK(slurm.launched[0].unset_env == Strings{"NOT_THIS"});
    CHECK(slurm.launched[1].unset_env == joined({"NOT_THIS"}, launch::allocation_task_counts()));
}

TEST_CASE("supervise: the mpiexec launcher's command line ignores a geometry", "[supervise]") {
    const auto launcher = supervise::mpiexec_launcher({"-n", "4"}, {"trainrt", "--config", "job.ini"},
                                                      {{}, "/sweep/trial_0000.out", {"OMP_NUM_THREADS=1"}});
    CHECK(launcher->describe({"-N", "2"}) == "mpiexec -n 4 trainrt --config job.ini");
}
