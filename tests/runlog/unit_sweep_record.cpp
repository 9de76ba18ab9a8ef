#include <catch2/catch.hpp>

#include <fstream>

#include "runlog/run_files.hpp"
#include "runlog/sweep_record.hpp"
#include "temp_run_dir.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;

TEST_CASE("a sweep record reads back as it was saved") {
    testing::TempRunDir dir;
    runlog::SweepState state;
    state.definition = {{"tune.num_samples", "2"}};
    state.metric = "loss";
    state.mode = "min";
    runlog::TrialRecord trial;
    trial.name = "trial_0000";
    trial.values = {{"train.lr", "0.01"}};
    trial.status = runlog::TrialStatus::terminated;
    trial.decisions.push_back({2, 0.5, 0.4, 3, true, -1});
    trial.decisions.push_back({4, 0.6, 0, 3, false, 1, {{"train.lr", "0.02"}}});  // PBT: copied trial 1
    state.trials.push_back(trial);
    runlog::save_state(dir.str(), state);
    const runlog::SweepState read = runlog::load_state(dir.str());
    CHECK(read.definition == state.definition);
    CHECK(read.metric == "loss");
    CHECK(read.mode == "min");
    REQUIRE(read.trials.size() == 1);
    CHECK(read.trials[0].values == trial.values);
    CHECK(read.trials[0].status == runlog::TrialStatus::terminated);
    CHECK(read.trials[0].decisions[0].cutoff == 0.4);
    CHECK(read.trials[0].decisions[0].values.empty());  // a record written before decisions had values
    CHECK(read.trials[0].decisions[1].donor == 1);
    CHECK(read.trials[0].decisions[1].values == runlog::TrialValues{{"train.lr", "0.02"}});
}

TEST_CASE("an absent sweep record is an empty one; a damaged one is a storage error naming it") {
    testing::TempRunDir dir;
    CHECK(runlog::load_state(dir.str()).trials.empty());
    std::ofstream(runlog::path_in(dir.str(), runlog::kSweepRecord)) << "{\"trials\": [";
    CHECK_THROWS_AS(runlog::load_state(dir.str()), StorageError);
    CHECK_THROWS_WITH(runlog::load_state(dir.str()), Catch::Contains("sweep.json does not read as a sweep record"));
}
