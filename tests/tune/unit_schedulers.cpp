// tune/scheduler: the scheduler tune.scheduler names, what each stores in the sweep's definition,
// a new trial's first target, what it sets for a trial's step, and what it decides from the rows
// a trial wrote (ASHA: each rung's verdict file; PBT: the next boundary) and from a step's end.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/manifest.hpp"
#include "temp_run_dir.hpp"
#include "trainrt/error.hpp"
#include "tune/scheduler.hpp"

using namespace trainrt;
using namespace trainrt::tune;
using runlog::TrialRecord;
using runlog::TrialStatus;
using trainrt::testing::TempRunDir;

namespace {

// A sweep of `scheduler` with `tune_lines` added to [tune], on a fashion_mlp base job of 10
// epochs; its files in `dir`. Trials are compared by "acc".
SweepConfig sweep_of(const TempRunDir& dir, const std::string& scheduler, const std::string& tune_lines = "") {
    std::ofstream(dir.path() / "base.ini") << "[run]\nworkload = fashion_mlp\nseed = 3\n[train]\nepochs = 10\n";
    std::ofstream(dir.path() / "sweep.ini") << "[tune]\nbase = base.ini\nmetric = acc\nnum_samples = 2\nscheduler = "
                                            << scheduler << "\n" << tune_lines << "[space]\ntrain.lr = choice(0.1, 0.01)\n";
    const std::string path = (dir.path() / "sweep.ini").string();
    const char* argv[] = {"trainrt-tune", "--config", path.c_str()};
    return load_sweep(3, argv);
}

// A PBT sweep counting reports (pbt.time_attr = training_iteration), its base job ending each trial
// by `criteria` ([stop] criteria; none when empty); `tune_lines` added to [tune].
SweepConfig pbt_by_reports(const TempRunDir& dir, const std::string& criteria, const std::string& tune_lines = "") {
    std::ofstream(dir.path() / "base.ini") << "[run]\nworkload = fashion_mlp\nseed = 3\n[train]\nlr = 0.05\n"
                                           << (criteria.empty() ? "" : "[stop]\ncriteria = " + criteria + "\n");
    std::ofstream(dir.path() / "sweep.ini") << "[tune]\nbase = base.ini\nmetric = acc\nnum_samples = 2\nscheduler = pbt\n"
                                               "pbt.time_attr = training_iteration\npbt.perturbation_interval = 4\n"
                                            << tune_lines << "[space]\ntrain.lr = choice(0.1, 0.05, 0.01)\n";
    const std::string path = (dir.path() / "sweep.ini").string();
    const char* argv[] = {"trainrt-tune", "--config", path.c_str()};
    return load_sweep(3, argv);
}

// A committed checkpoint (no tensors) of `run_dir` at `iteration`, reporting `epoch`.
void committed(const std::filesystem::path& run_dir, std::int64_t iteration, std::int64_t epoch) {
    checkpoint::Manifest manifest;
    manifest.name = checkpoint::checkpoint_name(iteration), manifest.iteration = iteration;
    manifest.layout = "file_per_rank", manifest.created = "2024-05-01T12:00:00Z";
    manifest.metrics = {{"epoch", epoch}};
    const std::filesystem::path dir = std::filesystem::path(checkpoint::checkpoints_dir(run_dir.string())) / manifest.name;
    std::filesystem::create_directories(dir);
    std::ofstream(dir / checkpoint::kManifestFile) << checkpoint::to_json(manifest).dump(2);
}

// A sweep directory holding two trials, each with a run directory, under a scheduler's context;
// `saves` counts the context's saves.
struct Sweep {
    TempRunDir dir;
    std::string path = dir.str();
    runlog::SweepState state;
    int saves = 0;
    SchedulerContext context{path, state, [this] { ++saves; }};

    explicit Sweep(std::int64_t first_target) {
        for (std::size_t i = 0; i < 2; ++i) {
            TrialRecord trial;
            trial.index = i, trial.name = "trial_000" + std::to_string(i), trial.target = first_target;
            trial.status = TrialStatus::running, trial.attempts = 1;
            std::filesystem::create_directories(dir.path() / trial.name);
            state.trials.push_back(trial);
        }
    }
    // Appends a result.jsonl row to trial `index`'s run.
    void report(std::size_t index, int epoch, double acc) {
        std::ofstream(dir.path() / state.trials[index].name / "result.jsonl", std::ios::app)
            << "{\"epoch\": " << epoch << ", \"_training_iteration\": " << epoch << ", \"acc\": " << acc << "}\n";
    }
    // Appends `row` (a JSON object's members) to trial `index`'s result.jsonl.
    void row(std::size_t index, const std::string& members) {
        std::ofstream(dir.path() / state.trials[index].name / "result.jsonl", std::ios::app) << "{" << members << "}\n";
    }
    std::string verdict(std::size_t index, int rung) const {
        std::ifstream in(dir.path() / state.trials[index].name / "decisions" / std::to_string(rung));
        std::string text;
        std::getline(in, text);
        return in ? text : "(none)";
    }
};

std::map<std::string, std::string> definition_of(const Scheduler& scheduler) {
    std::map<std::string, std::string> definition;
    scheduler.add_definition(definition);
    return definition;
}

}  // namespace

TEST_CASE("the factory gives the scheduler tune.scheduler names: its first target and definition") {
    TempRunDir dir;
    const SweepConfig fifo = sweep_of(dir, "fifo");
    CHECK(make_scheduler(fifo)->first_target(0) == 0);
    CHECK(definition_of(*make_scheduler(fifo)).empty());

    const SweepConfig asha = sweep_of(dir, "asha", "asha.grace_period = 2\nasha.max_t = 18\n");
    CHECK(make_scheduler(asha)->first_target(0) == 2);
    CHECK(definition_of(*make_scheduler(asha)) == std::map<std::string, std::string>{{"tune.asha.rungs", "2 6 18 "}});
    const SweepConfig by_reports = sweep_of(dir, "asha", "asha.time_attr = training_iteration\nasha.max_t = 9\n");
    CHECK(definition_of(*make_scheduler(by_reports)) ==
          std::map<std::string, std::string>{{"tune.asha.rungs", "1 3 9 "}, {"tune.asha.time_attr", "training_iteration"}});

    const SweepConfig pbt = sweep_of(dir, "pbt", "pbt.perturbation_interval = 4\npbt.quantile_fraction = 0.4\n");
    CHECK(make_scheduler(pbt)->first_target(0) == 4);
    CHECK(definition_of(*make_scheduler(pbt)) ==
          std::map<std::string, std::string>{{"tune.pbt.boundaries", "4 8 10 "},
                                             {"tune.pbt.quantile_fraction", "0.4"},
                                             {"tune.pbt.resample_probability", "0.25"}});
}

TEST_CASE("the median stopping rule: a pause at every report from its grace period to the trial's end") {
    TempRunDir dir;
    const SweepConfig by_epoch = sweep_of(dir, "median_stopping", "median.time_attr = epoch\nmedian.grace_period = 7\n");
    const std::unique_ptr<Scheduler> median = make_scheduler(by_epoch);
    CHECK(median->first_target(0) == 7);
    CHECK(definition_of(*median) == std::map<std::string, std::string>{{"tune.median.rungs", "7 8 9 10 "}});
    TrialRecord trial;
    trial.target = 8;
    CHECK(median->step_args(trial) == std::vector<std::string>{"--stop.pause_by=epoch", "--stop.pause_at=8,9,10",
                                                               "--stop.pause_metric=acc"});
    CHECK_THROWS_WITH(make_scheduler(sweep_of(dir, "median_stopping")),  // by reports: the base job sets no end
                      Catch::Contains("training_iteration>=N") && Catch::Contains("base.ini"));
}

TEST_CASE("the median stopping rule decides a running trial's reports against the others' rows") {
    TempRunDir dir;
    const SweepConfig sweep = sweep_of(dir, "median_stopping", "median.time_attr = epoch\nmedian.min_samples_required = 1\n");
    const std::unique_ptr<Scheduler> median = make_scheduler(sweep);
    Sweep run(median->first_target(0));
    for (int epoch = 1; epoch <= 3; ++epoch) run.report(1, epoch, 0.8);
    run.report(0, 1, 0.9);
    median->watch_running(run.context, run.state.trials[0]);
    CHECK(run.verdict(0, 1) == "continue");
    run.report(0, 2, 0.5);  // its best (0.9) is not worse than trial 1's mean (0.8)
    median->watch_running(run.context, run.state.trials[0]);
    CHECK(run.verdict(0, 2) == "continue");
    CHECK(run.state.trials[0].target == 3);

    Sweep other(median->first_target(0));
    for (int epoch = 1; epoch <= 3; ++epoch) other.report(1, epoch, 0.8);
    other.report(0, 1, 0.5);
    median->watch_running(other.context, other.state.trials[0]);
    CHECK(other.verdict(0, 1) == "stop");
    CHECK(other.state.trials[0].target == 0);
    REQUIRE(other.state.trials[0].decisions.size() == 1);
    CHECK(other.state.trials[0].decisions[0].cutoff == Approx(0.8));  // the median, recorded
}

TEST_CASE("PBT needs the base job's train.epochs: ConfigError from the factory, naming the base job") {
    TempRunDir dir;
    SweepConfig pbt = sweep_of(dir, "pbt");
    auto values = pbt.base.values();
    values.erase("train.epochs");  // a workload that declares none (the built-in ones default it)
    pbt.base = JobConfig(values);
    CHECK_THROWS_AS(make_scheduler(pbt), ConfigError);
    CHECK_THROWS_WITH(make_scheduler(pbt), Catch::Contains("train.epochs") && Catch::Contains("base.ini"));
}

TEST_CASE("what each scheduler sets for a trial's step") {
    TempRunDir dir;
    TrialRecord trial;
    trial.target = 3;
    const SweepConfig asha = sweep_of(dir, "asha", "asha.max_t = 9\n");
    CHECK(make_scheduler(asha)->step_args(trial) ==
          std::vector<std::string>{"--stop.pause_by=epoch", "--stop.pause_at=3,9", "--stop.pause_metric=acc",
                                   "--train.epochs=9"});
    const SweepConfig by_reports = sweep_of(dir, "asha", "asha.time_attr = training_iteration\nasha.max_t = 9\n");
    CHECK(make_scheduler(by_reports)->step_args(trial) ==
          std::vector<std::string>{"--stop.pause_by=training_iteration", "--stop.pause_at=3,9", "--stop.pause_metric=acc"});

    const SweepConfig pbt = sweep_of(dir, "pbt");
    trial.target = 8;
    CHECK(make_scheduler(pbt)->step_args(trial) == std::vector<std::string>{"--train.epochs=8"});

    const SweepConfig fifo = sweep_of(dir, "fifo");
    trial.target = 0;
    CHECK(make_scheduler(fifo)->step_args(trial).empty());
}

TEST_CASE("FIFO: a step that ended done is TERMINATED; any other end is the sweep's to judge") {
    TempRunDir dir;
    const SweepConfig sweep = sweep_of(dir, "fifo");
    const std::unique_ptr<Scheduler> fifo = make_scheduler(sweep);
    Sweep run(0);
    CHECK_FALSE(fifo->ended_before_start(run.context, run.state.trials[0]));
    CHECK_FALSE(fifo->step_ended(run.context, run.state.trials[0], TrialEnd::failed));
    CHECK(run.state.trials[0].status == TrialStatus::running);
    CHECK(fifo->step_ended(run.context, run.state.trials[0], TrialEnd::done));
    CHECK(run.state.trials[0].status == TrialStatus::terminated);
    CHECK(run.saves == 0);
}

TEST_CASE("ASHA decides a rung from a running trial's new rows, saves, then writes the verdict where the step waits") {
    TempRunDir dir;
    const SweepConfig sweep = sweep_of(dir, "asha", "asha.max_t = 3\n");  // rungs 1, 3
    const std::unique_ptr<Scheduler> asha = make_scheduler(sweep);
    Sweep run(asha->first_target(0));
    TrialRecord& first = run.state.trials[0];
    TrialRecord& second = run.state.trials[1];

    asha->watch_running(run.context, first);  // no rows yet
    CHECK(first.decisions.empty());
    run.report(0, 1, 0.5);
    asha->watch_running(run.context, first);
    REQUIRE(first.decisions.size() == 1);
    CHECK(first.decisions[0].promoted);  // alone at the rung: its own value is the cutoff
    CHECK(first.decisions[0].seen == 1);
    CHECK(first.target == 3);
    CHECK(run.verdict(0, 1) == "continue");
    CHECK(run.saves == 1);
    asha->watch_running(run.context, first);  // nothing new: nothing decided again
    CHECK(run.saves == 1);

    run.report(1, 1, 0.1);  // worse than the cutoff of {0.1, 0.5}
    asha->watch_running(run.context, second);
    REQUIRE(second.decisions.size() == 1);
    CHECK_FALSE(second.decisions[0].promoted);
    CHECK(second.decisions[0].seen == 2);
    CHECK(second.decisions[0].cutoff == Approx(0.1 + 0.4 * 2.0 / 3.0));
    CHECK(second.target == 0);
    CHECK(run.verdict(1, 1) == "stop");

    // The stopped trial's step ends (here: on a stop) with no rung left: TERMINATED.
    CHECK(asha->step_ended(run.context, second, TrialEnd::stopped));
    CHECK(second.status == TrialStatus::terminated);
    // A promoted trial's failed step is the sweep's to judge.
    CHECK_FALSE(asha->step_ended(run.context, first, TrialEnd::failed));
    CHECK(first.status == TrialStatus::running);
}

TEST_CASE("ASHA: a trial whose earlier attempt's rows reached its last rung needs no more steps") {
    TempRunDir dir;
    const SweepConfig sweep = sweep_of(dir, "asha", "asha.max_t = 3\n");
    const std::unique_ptr<Scheduler> asha = make_scheduler(sweep);
    Sweep run(asha->first_target(0));
    TrialRecord& trial = run.state.trials[0];
    trial.status = TrialStatus::pending;
    CHECK_FALSE(asha->ended_before_start(run.context, trial));  // no rows: it starts
    run.report(0, 1, 0.5);
    CHECK_FALSE(asha->ended_before_start(run.context, trial));  // rung 1 decided, rung 3 left
    CHECK(trial.target == 3);
    run.report(0, 2, 0.6);
    run.report(0, 3, 0.7);
    CHECK(asha->ended_before_start(run.context, trial));
    REQUIRE(trial.decisions.size() == 2);
    CHECK(trial.decisions[1].rung == 3);
    CHECK(trial.target == 0);
    CHECK(run.verdict(0, 3) == "stop");  // the last rung's verdict: the step ends there
}

TEST_CASE("ASHA: a step that returned before its next rung is TERMINATED with what it reported") {
    TempRunDir dir;
    const SweepConfig sweep = sweep_of(dir, "asha", "asha.max_t = 3\n");
    const std::unique_ptr<Scheduler> asha = make_scheduler(sweep);
    Sweep run(asha->first_target(0));
    CHECK(asha->step_ended(run.context, run.state.trials[0], TrialEnd::done));
    CHECK(run.state.trials[0].status == TrialStatus::terminated);
    CHECK(run.state.trials[0].target == 1);
}

TEST_CASE("PBT at a boundary: the trial goes on to the next one, is done at the last, ERROR without the metric") {
    TempRunDir dir;
    const SweepConfig sweep = sweep_of(dir, "pbt", "pbt.perturbation_interval = 4\n");  // boundaries 4, 8, 10
    const std::unique_ptr<Scheduler> pbt = make_scheduler(sweep);
    Sweep run(pbt->first_target(0));
    TrialRecord& trial = run.state.trials[0];
    CHECK_FALSE(pbt->step_ended(run.context, trial, TrialEnd::stopped));
    CHECK(trial.status == TrialStatus::running);

    run.report(0, 4, 0.5);  // the only score: no quantiles, nothing to exploit
    CHECK(pbt->step_ended(run.context, trial, TrialEnd::done));
    CHECK(trial.status == TrialStatus::pending);
    CHECK(trial.target == 8);
    REQUIRE(trial.decisions.size() == 1);
    CHECK(trial.decisions[0].rung == 4);
    CHECK(trial.decisions[0].promoted);
    CHECK(trial.decisions[0].donor == -1);
    CHECK(trial.decisions[0].values == trial.values);  // what it reached the boundary with (PB2's data)

    CHECK(pbt->step_ended(run.context, trial, TrialEnd::done));  // no row at epoch 8
    CHECK(trial.status == TrialStatus::error);
    CHECK(trial.target == 8);

    run.report(0, 8, 0.6);
    run.report(0, 10, 0.7);
    trial.target = 10;
    CHECK(pbt->step_ended(run.context, trial, TrialEnd::done));
    CHECK(trial.status == TrialStatus::terminated);
    CHECK(trial.target == 0);
}

TEST_CASE("PB2: PBT's keys and boundaries; every [space] key bounded; resample_probability refused") {
    TempRunDir dir;
    CHECK_THROWS_WITH(make_scheduler(sweep_of(dir, "pb2")),  // train.lr = choice(...): no bounds to explore in
                      Catch::Contains("train.lr") && Catch::Contains("scheduler = pb2"));
    CHECK_THROWS_WITH(sweep_of(dir, "pb2", "pbt.resample_probability = 0.5\n"),
                      Catch::Contains("tune.pbt.resample_probability") && Catch::Contains("scheduler = pbt"));
    std::ofstream(dir.path() / "sweep.ini") << "[tune]\nbase = base.ini\nmetric = acc\nnum_samples = 2\nscheduler = pb2\n"
                                               "pbt.perturbation_interval = 4\n[space]\ntrain.lr = uniform(0.01, 0.1)\n";
    const std::string path = (dir.path() / "sweep.ini").string();
    const char* argv[] = {"trainrt-tune", "--config", path.c_str()};
    const SweepConfig pb2 = load_sweep(3, argv);
    const std::unique_ptr<Scheduler> scheduler = make_scheduler(pb2);
    CHECK(scheduler->first_target(0) == 4);
    CHECK(definition_of(*scheduler).at("tune.pbt.boundaries") == "4 8 10 ");
}

TEST_CASE("PBT by training_iteration: boundaries up to the base job's [stop] training_iteration, a pause at each") {
    TempRunDir dir;
    const SweepConfig sweep = pbt_by_reports(dir, "done>=1,training_iteration>=10");
    const std::unique_ptr<Scheduler> pbt = make_scheduler(sweep);
    CHECK(pbt->first_target(0) == 4);
    CHECK(definition_of(*pbt) == std::map<std::string, std::string>{{"tune.pbt.boundaries", "4 8 10 "},
                                                                     {"tune.pbt.quantile_fraction", "0.25"},
                                                                     {"tune.pbt.resample_probability", "0.25"},
                                                                     {"tune.pbt.time_attr", "training_iteration"}});
    TrialRecord trial;
    trial.target = 8;
    CHECK(pbt->step_args(trial) == std::vector<std::string>{"--stop.pause_by=training_iteration",
                                                            "--stop.pause_at=8", "--stop.pause_metric=acc"});
    // Before its step starts, the verdict at its boundary says stop: the step ends there.
    Sweep run(pbt->first_target(0));
    run.state.trials[0].status = TrialStatus::pending, run.state.trials[0].attempts = 0;
    CHECK_FALSE(pbt->ended_before_start(run.context, run.state.trials[0]));
    CHECK(run.verdict(0, 4) == "stop");
    CHECK(run.saves == 0);  // no start_from_base: its values stand
}

TEST_CASE("PBT by training_iteration needs each trial's end: ConfigError naming the base job") {
    TempRunDir dir;
    for (const std::string criteria : {"", "done>=1"}) {
        const SweepConfig sweep = pbt_by_reports(dir, criteria);
        CHECK_THROWS_AS(make_scheduler(sweep), ConfigError);
        CHECK_THROWS_WITH(make_scheduler(sweep), Catch::Contains("training_iteration>=N") && Catch::Contains("base.ini"));
    }
}

TEST_CASE("PBT by training_iteration: the lower trial copies the donor's newest checkpoint at or before the boundary") {
    TempRunDir dir;
    const SweepConfig sweep = pbt_by_reports(dir, "training_iteration>=10", "pbt.resample_probability = 0\n");
    const std::unique_ptr<Scheduler> pbt = make_scheduler(sweep);
    Sweep run(pbt->first_target(0));
    TrialRecord& trial = run.state.trials[0];
    TrialRecord& donor = run.state.trials[1];
    trial.values = {{"train.lr", "0.01"}}, donor.values = {{"train.lr", "0.05"}};
    // The donor ran ahead: scored at 4 (alone: it goes on) and at 8; checkpoints at 3 and 8.
    for (int i = 1; i <= 8; ++i) run.report(1, i, i == 4 ? 0.9 : 0.95);
    committed(run.dir.path() / donor.name, 3, 1), committed(run.dir.path() / donor.name, 8, 2);
    REQUIRE(pbt->step_ended(run.context, donor, TrialEnd::done));
    CHECK((donor.target == 8 && donor.decisions[0].seen == 1 && donor.status == TrialStatus::pending));
    REQUIRE(pbt->step_ended(run.context, donor, TrialEnd::done));
    CHECK(donor.target == 10);

    // The trial reaches 4 worse than the donor's score at 4 (not its later one): it copies the
    // donor's checkpoint of iteration 3 and goes on to 8 with the donor's rate moved to a neighbour.
    for (int i = 1; i <= 4; ++i) run.report(0, i, 0.1);
    REQUIRE(pbt->step_ended(run.context, trial, TrialEnd::done));
    REQUIRE(trial.decisions.size() == 1);
    CHECK((trial.decisions[0].rung == 4 && trial.decisions[0].seen == 2));
    CHECK((trial.decisions[0].donor == 1 && !trial.decisions[0].promoted));
    CHECK(checkpoint::committed_names((run.dir.path() / trial.name).string()) ==
          std::vector<std::string>{checkpoint::checkpoint_name(3)});
    CHECK(checkpoint::read_manifest(checkpoint::checkpoints_dir((run.dir.path() / trial.name).string()) + "/" +
                                    checkpoint::checkpoint_name(3)).copied_from.find(donor.name) != std::string::npos);
    REQUIRE(trial.values.size() == 1);  // 0.05's neighbour in choice(0.1, 0.05, 0.01)
    CHECK((trial.values[0].second == "0.1" || trial.values[0].second == "0.01"));
    CHECK((trial.status == TrialStatus::pending && trial.target == 8));  // never decided at 4 again
}

TEST_CASE("PBT by training_iteration: a step that ended before its boundary, or by its own criteria, is TERMINATED") {
    TempRunDir dir;
    const SweepConfig sweep = pbt_by_reports(dir, "done>=1,training_iteration>=10");
    const std::unique_ptr<Scheduler> pbt = make_scheduler(sweep);
    Sweep run(pbt->first_target(0));
    CHECK_FALSE(pbt->step_ended(run.context, run.state.trials[0], TrialEnd::failed));
    run.report(0, 1, 0.5);  // its function returned at iteration 1
    CHECK(pbt->step_ended(run.context, run.state.trials[0], TrialEnd::done));
    CHECK(run.state.trials[0].status == TrialStatus::terminated);
    CHECK(run.state.trials[0].decisions.empty());
    // done = 1 at the boundary: scored there, and done.
    run.row(1, "\"_training_iteration\": 4, \"acc\": 0.5, \"done\": 1");
    CHECK(pbt->step_ended(run.context, run.state.trials[1], TrialEnd::done));
    CHECK(run.state.trials[1].status == TrialStatus::terminated);
    CHECK(run.state.trials[1].target == 0);
    REQUIRE(run.state.trials[1].decisions.size() == 1);
    CHECK(run.state.trials[1].decisions[0].rung == 4);
}

TEST_CASE("PBT's start_from_base: a new trial starts at the base job's value; a key outside [space] refused") {
    TempRunDir dir;
    const SweepConfig sweep = pbt_by_reports(dir, "training_iteration>=10", "pbt.start_from_base = train.lr\n");
    const std::unique_ptr<Scheduler> pbt = make_scheduler(sweep);
    CHECK(definition_of(*pbt).at("tune.pbt.start_from_base") == "train.lr");
    Sweep run(pbt->first_target(0));
    TrialRecord& trial = run.state.trials[0];
    trial.status = TrialStatus::pending, trial.attempts = 0, trial.values = {{"train.lr", "0.1"}};
    CHECK_FALSE(pbt->ended_before_start(run.context, trial));
    CHECK(trial.values == runlog::TrialValues{{"train.lr", "0.05"}});
    CHECK(run.saves == 1);
    trial.attempts = 1, trial.values = {{"train.lr", "0.01"}};  // explored since: kept
    CHECK_FALSE(pbt->ended_before_start(run.context, trial));
    CHECK(trial.values == runlog::TrialValues{{"train.lr", "0.01"}});

    const SweepConfig outside = pbt_by_reports(dir, "training_iteration>=10", "pbt.start_from_base = train.batch_size\n");
    CHECK_THROWS_WITH(make_scheduler(outside), Catch::Contains("train.batch_size") && Catch::Contains("[space]"));
}

TEST_CASE("PBT by epoch: a trial its own [stop] criteria ended before its boundary is TERMINATED, not ERROR") {
    TempRunDir dir;
    SweepConfig sweep = sweep_of(dir, "pbt", "pbt.perturbation_interval = 4\n");
    auto values = sweep.base.values();
    values["stop.criteria"] = {"acc>=0.9", "test"};
    sweep.base = JobConfig(values);
    const std::unique_ptr<Scheduler> pbt = make_scheduler(sweep);
    Sweep run(pbt->first_target(0));
    run.report(0, 2, 0.95);
    CHECK(pbt->step_ended(run.context, run.state.trials[0], TrialEnd::done));
    CHECK(run.state.trials[0].status == TrialStatus::terminated);
}

namespace {

// `count` trials of a HyperBand sweep in `run`'s state, each RUNNING to its bracket's first milestone.
void hyperband_trials(Sweep& run, const Scheduler& hyperband, std::size_t count) {
    run.state.trials.clear();
    for (std::size_t i = 0; i < count; ++i) {
        TrialRecord trial;
        trial.index = i, trial.name = "trial_000" + std::to_string(i), trial.target = hyperband.first_target(i);
        trial.status = TrialStatus::running, trial.attempts = 1;
        std::filesystem::create_directories(run.dir.path() / trial.name);
        run.state.trials.push_back(trial);
    }
}

}  // namespace

TEST_CASE("HyperBand: its definition, each trial's first milestone by its bracket, a step to the milestone") {
    TempRunDir dir;
    const SweepConfig sweep = sweep_of(dir, "hyperband", "hyperband.max_t = 9\n");  // brackets of 3, 5, 9 trials
    const std::unique_ptr<Scheduler> hyperband = make_scheduler(sweep);
    CHECK(definition_of(*hyperband) == std::map<std::string, std::string>{{"tune.hyperband.max_t", "9"},
                                                                          {"tune.hyperband.reduction_factor", "3"},
                                                                          {"tune.hyperband.stop_last_trials", "true"},
                                                                          {"tune.hyperband.time_attr", "epoch"}});
    CHECK(hyperband->first_target(0) == 9);
    CHECK(hyperband->first_target(3) == 3);
    CHECK(hyperband->first_target(8) == 1);
    TrialRecord trial;
    trial.target = 3;
    CHECK(hyperband->step_args(trial) == std::vector<std::string>{"--train.epochs=3"});
    const SweepConfig open_end = sweep_of(dir, "hyperband", "hyperband.max_t = 9\nhyperband.stop_last_trials = false\n");
    CHECK(make_scheduler(open_end)->first_target(0) == 0);  // bracket s = 0: no milestone, its own end
    CHECK(make_scheduler(open_end)->first_target(3) == 3);
}

TEST_CASE("HyperBand: a bracket's trials wait at its milestone; when all reached it the best go on, the rest stop") {
    TempRunDir dir;
    const SweepConfig sweep = sweep_of(dir, "hyperband", "hyperband.max_t = 9\n");
    const std::unique_ptr<Scheduler> hyperband = make_scheduler(sweep);
    Sweep run(0);
    hyperband_trials(run, *hyperband, 8);  // trials 3..7: bracket 1, milestones 3 and 9, 2 kept at 3
    const std::vector<double> acc{0.4, 0.9, 0.2, 0.7};
    for (std::size_t i = 3; i < 7; ++i) {
        run.report(i, 3, acc[i - 3]);
        CHECK(hyperband->step_ended(run.context, run.state.trials[i], TrialEnd::done));
        CHECK(run.state.trials[i].status == TrialStatus::pending);
        CHECK(hyperband->waits(run.context, run.state.trials[i]));  // trial 7 still runs
    }
    CHECK(run.saves == 0);
    CHECK_FALSE(hyperband->step_ended(run.context, run.state.trials[7], TrialEnd::failed));  // the sweep's to judge
    run.report(7, 2, 0.99);  // returned before the milestone: leaves the bracket
    CHECK(hyperband->step_ended(run.context, run.state.trials[7], TrialEnd::done));
    CHECK(run.state.trials[7].status == TrialStatus::terminated);

    CHECK(hyperband->waits(run.context, run.state.trials[3]));  // decides; trial 3 (0.4) stopped
    CHECK(run.saves == 1);
    for (std::size_t i = 3; i < 7; ++i) {
        const TrialRecord& trial = run.state.trials[i];
        const bool kept = i == 4 || i == 6;
        CHECK(trial.status == (kept ? TrialStatus::pending : TrialStatus::terminated));
        CHECK(trial.target == (kept ? 9 : 0));
        REQUIRE(trial.decisions.size() == 1);
        CHECK(trial.decisions[0].rung == 3);
        CHECK(trial.decisions[0].promoted == kept);
        CHECK(trial.decisions[0].seen == 4);
        CHECK(trial.decisions[0].cutoff == 0.7);
    }
    CHECK_FALSE(hyperband->waits(run.context, run.state.trials[4]));  // starts for milestone 9
    run.report(4, 9, 0.95);
    CHECK(hyperband->step_ended(run.context, run.state.trials[4], TrialEnd::done));
    CHECK(run.state.trials[4].status == TrialStatus::terminated);  // the last milestone: done at once
    CHECK(run.state.trials[4].target == 0);
}

TEST_CASE("HyperBand by training_iteration: the stop verdict at the milestone is in place before a step starts") {
    TempRunDir dir;
    const SweepConfig sweep = sweep_of(dir, "hyperband", "hyperband.max_t = 9\nhyperband.time_attr = training_iteration\n");
    const std::unique_ptr<Scheduler> hyperband = make_scheduler(sweep);
    Sweep run(0);
    hyperband_trials(run, *hyperband, 4);
    TrialRecord& trial = run.state.trials[3];
    trial.status = TrialStatus::pending, trial.attempts = 0;
    CHECK(hyperband->step_args(trial) == std::vector<std::string>{"--stop.pause_by=training_iteration",
                                                                  "--stop.pause_at=3", "--stop.pause_metric=acc"});
    CHECK_FALSE(hyperband->waits(run.context, trial));
    CHECK(run.verdict(3, 3) == "stop");
}

TEST_CASE("HyperBand: a trial entering its bracket after a halving trains straight to the bracket's milestone") {
    TempRunDir dir;
    const SweepConfig sweep = sweep_of(dir, "hyperband", "hyperband.max_t = 9\n");
    const std::unique_ptr<Scheduler> hyperband = make_scheduler(sweep);
    Sweep run(0);
    hyperband_trials(run, *hyperband, 5);
    run.state.trials[3].target = 9, run.state.trials[3].status = TrialStatus::running;  // promoted earlier
    TrialRecord& late = run.state.trials[4];
    late.status = TrialStatus::pending, late.attempts = 0;
    CHECK_FALSE(hyperband->waits(run.context, late));
    CHECK(late.target == 9);
    CHECK(run.saves == 1);
}
