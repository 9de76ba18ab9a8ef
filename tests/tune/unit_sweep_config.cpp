// tune/sweep_config: a sweep file's [tune] keys, its [space] domains and its base job load and are
// checked before anything runs; each mistake is one line naming the key and FILE:LINE.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "trainrt/error.hpp"
#include "tune/sweep_config.hpp"

using namespace trainrt;
using namespace trainrt::tune;

namespace {

// A sweep file next to a copy of a fashion_mlp base job, in a fresh directory.
struct SweepDir {
    std::filesystem::path dir;
    SweepDir() {
        static int counter = 0;
        dir = std::filesystem::temp_directory_path() /
              ("trainrt_sweep_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
        std::filesystem::create_directories(dir);
        std::ofstream(dir / "base.ini") << "[run]\nworkload = fashion_mlp\nseed = 3\n[train]\nepochs = 2\n";
    }
    ~SweepDir() { std::filesystem::remove_all(dir); }
    std::string write(const std::string& text) const {
        std::ofstream(dir / "sweep.ini") << text;
        return (dir / "sweep.ini").string();
    }
};

SweepConfig load(const std::string& path, std::vector<std::string> more = {}) {
    std::vector<std::string> words{"trainrt-tune", "--config", path};
    words.insert(words.end(), more.begin(), more.end());
    std::vector<const char*> argv;
    for (const std::string& word : words) argv.push_back(word.c_str());
    return load_sweep(static_cast<int>(argv.size()), argv.data());
}

std::string error_of(const std::string& path, std::vector<std::string> more = {}) {
    try {
        load(path, std::move(more));
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "";
}

const char* const good = R"(# a sweep
[tune]
base = base.ini
metric = test_accuracy
num_samples = 6
scheduler = asha
asha.max_t = 20
[space]
train.lr = loguniform(1e-4, 1e-1)
train.batch_size = choice(32, 64, 128)
data.shuffle = grid(none, global)
)";

}  // namespace

TEST_CASE("a sweep file loads: its keys, its domains in order, its base job") {
    SweepDir dir;
    const SweepConfig sweep = load(dir.write(good), {"--train.epochs=4", "--tune.num_samples=4"});
    CHECK(sweep.tune.metric.value == "test_accuracy");
    CHECK(sweep.tune.mode.value == ScoreOrder::max);
    CHECK(sweep.tune.scheduler.value == SchedulerKind::asha);
    CHECK(sweep.asha.max_t.value == 20);
    CHECK(sweep.asha.grace_period.value == 1);  // a default
    CHECK(sweep.tune.num_samples.value == 4);   // the command line wins over the file
    CHECK(sweep.trials == 4);
    REQUIRE(sweep.space.size() == 3);
    CHECK(sweep.space[0].key == "train.lr");
    CHECK(sweep.space[2].source.find("sweep.ini:11") != std::string::npos);
    CHECK(sweep.base.get("train.epochs") == "4");  // --train.epochs on the tune command line: every trial
    CHECK(sweep.base.get("run.seed") == "3");
    const TrialValues trial = native_trial(sweep.space, sweep.tune.search.value, 3, 1);
    REQUIRE(trial.size() == 3);
    CHECK(trial[2] == std::pair<std::string, std::string>{"data.shuffle", "global"});  // grid point 1 of 2
}

TEST_CASE("a wrong sweep file is one line naming the key and where it was written") {
    SweepDir dir;
    auto with = [&](const std::string& from, const std::string& to) {
        std::string text = good;
        text.replace(text.find(from), from.size(), to);
        return dir.write(text);
    };
    CHECK_THAT(error_of(with("train.lr =", "train.lrr =")),
               Catch::Contains("unknown key 'train.lrr'") && Catch::Contains("did you mean 'train.lr'?") &&
                   Catch::Contains("sweep.ini:9"));
    CHECK_THAT(error_of(with("metric = test_accuracy", "metirc = test_accuracy")),
               Catch::Contains("did you mean 'tune.metric'?"));
    CHECK_THAT(error_of(with("choice(32, 64, 128)", "choice()")), Catch::Contains("empty"));
    CHECK_THAT(error_of(with("loguniform(1e-4, 1e-1)", "loguniform(0, 1e-1)")), Catch::Contains("low > 0"));
    CHECK_THAT(error_of(with("num_samples = 6", "num_samples = 5")), Catch::Contains("not a multiple of the grid's 2 points"));
    CHECK_THAT(error_of(with("scheduler = asha", "scheduler = median")), Catch::Contains("tune.scheduler"));
    CHECK_THAT(error_of(with("asha.max_t = 20", "hyperband.max_t = 9")),
               Catch::Contains("tune.hyperband.max_t") && Catch::Contains("set scheduler = hyperband"));
    CHECK_THAT(error_of(with("base = base.ini", "base = nowhere.ini")), Catch::Contains("nowhere.ini"));
    CHECK_THAT(error_of(with("data.shuffle = grid(none, global)", "run.name = grid(a, b)")),
               Catch::Contains("names each trial's run itself"));
    CHECK_THAT(error_of(with("[space]", "[train]")), Catch::Contains("a sweep file holds [tune] and [space] only"));
    CHECK_THAT(error_of(with("data.shuffle = grid(none, global)", "data.shuffle = grid(none, sideways)")),
               Catch::Contains("sideways"));
    CHECK_THAT(error_of((dir.dir / "missing.ini").string()), Catch::Contains("does not exist"));
    for (const std::string& message : {error_of(with("train.lr =", "train.lrr ="))}) CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("BayesOpt: its keys, a metric, bounded domains only; its keys refused without it") {
    SweepDir dir;
    const std::string bayesopt = "[tune]\nbase = base.ini\nnum_samples = 4\nsearch = bayesopt\n";
    const std::string space = "[space]\ntrain.lr = quniform(0.01, 0.1, 0.01)\n";
    const SweepConfig sweep = load(dir.write(bayesopt + "metric = loss\nmode = min\nbayesopt.utility = ei\n"
                                                        "bayesopt.random_search_steps = 2\n" + space));
    CHECK(sweep.tune.search.value == SearchKind::bayesopt);
    CHECK(sweep.bayesopt.utility.value == "ei");
    CHECK(sweep.bayesopt.random_search_steps.value == 2);
    CHECK(sweep.bayesopt.kappa.value == 2.576);  // Ray's default
    CHECK(sweep.trials == 4);
    CHECK_THAT(error_of(dir.write(bayesopt + space)),
               Catch::Contains("tune.metric is not set") && Catch::Contains("search = bayesopt"));
    CHECK_THAT(error_of(dir.write(bayesopt + "metric = loss\n[space]\ntrain.batch_size = choice(32, 64)\n")),
               Catch::Contains("train.batch_size") && Catch::Contains("continuous bounds") && Catch::Contains("sweep.ini:"));
    CHECK_THAT(error_of(dir.write(bayesopt + "metric = loss\nbayesopt.utility = best\n" + space)),
               Catch::Contains("tune.bayesopt.utility"));
    CHECK_THAT(error_of(dir.write("[tune]\nbase = base.ini\nbayesopt.kappa = 1\n" + space)),
               Catch::Contains("tune.bayesopt.kappa") && Catch::Contains("search = bayesopt"));
}

TEST_CASE("tune.repeat: a searcher's draws repeated; num_samples a multiple of it; not with random search") {
    SweepDir dir;
    const std::string optuna = "[tune]\nbase = base.ini\nsearch = optuna\nmetric = loss\nrepeat = 2\n";
    const std::string space = "[space]\ntrain.lr = uniform(0.01, 0.1)\n";
    CHECK(load(dir.write(optuna + "num_samples = 6\n" + space)).tune.repeat.value == 2);
    CHECK_THAT(error_of(dir.write(optuna + "num_samples = 5\n" + space)),
               Catch::Contains("not a multiple of tune.repeat = 2") && Catch::Contains("sweep.ini:"));
    CHECK_THAT(error_of(dir.write("[tune]\nbase = base.ini\nnum_samples = 4\nrepeat = 2\n" + space)),
               Catch::Contains("tune.repeat = 2") && Catch::Contains("search = random"));
}

TEST_CASE("Nevergrad: its optimizer key, a metric, the domains it takes") {
    SweepDir dir;
    const std::string nevergrad = "[tune]\nbase = base.ini\nnum_samples = 4\nsearch = nevergrad\nmetric = loss\n";
    const SweepConfig sweep = load(dir.write(nevergrad + "nevergrad.optimizer = CMA\n[space]\ntrain.lr = "
                                                         "loguniform(1e-4, 1e-1)\ntrain.batch_size = choice(32, 64)\n"));
    CHECK(sweep.tune.search.value == SearchKind::nevergrad);
    CHECK(sweep.nevergrad.optimizer.value == "CMA");
    CHECK_THAT(error_of(dir.write(nevergrad + "[space]\ntrain.lr = quniform(0.01, 0.1, 0.01)\n")),
               Catch::Contains("train.lr") && Catch::Contains("search = nevergrad takes"));
    CHECK_THAT(error_of(dir.write("[tune]\nbase = base.ini\nsearch = nevergrad\n[space]\ntrain.lr = uniform(0, 1)\n")),
               Catch::Contains("tune.metric is not set") && Catch::Contains("search = nevergrad"));
}

TEST_CASE("Optuna's objectives: tune.optuna.objectives, else the sweep's metric and mode") {
    SweepDir dir;
    const std::string optuna = "[tune]\nbase = base.ini\nnum_samples = 4\nsearch = optuna\n";
    const std::string space = "[space]\ntrain.lr = loguniform(1e-4, 1e-1)\n";
    SweepConfig single = load(dir.write(optuna + "metric = loss\nmode = min\n" + space));
    REQUIRE(single.objectives.size() == 1);
    CHECK((single.objectives[0].metric == "loss" && single.objectives[0].mode == ScoreOrder::min));
    SweepConfig several = load(dir.write(optuna + "optuna.objectives = loss:min, gain : max\n" + space));
    REQUIRE(several.objectives.size() == 2);
    CHECK((several.objectives[1].metric == "gain" && several.objectives[1].mode == ScoreOrder::max));
    CHECK(load(dir.write("[tune]\nbase = base.ini\nnum_samples = 4\n" + space)).objectives.empty());
    CHECK_THAT(error_of(dir.write(optuna + space)), Catch::Contains("tune.metric is not set"));
    for (const char* bad : {"loss", "loss:lowest", ":min", "loss:min, loss:max"})
        CHECK_THAT(error_of(dir.write(optuna + "optuna.objectives = " + bad + "\n" + space)),
                   Catch::Contains("tune.optuna.objectives") && Catch::Contains("is not METRIC:min or METRIC:max") &&
                       Catch::Contains("sweep.ini:5"));
    CHECK_THAT(error_of(dir.write(optuna + "optuna.objectives = loss:min\nscheduler = asha\n" + space)),
               Catch::Contains("tune.metric is not set") && Catch::Contains("scheduler = asha"));
}

TEST_CASE("HyperOpt: its keys and Ray's defaults; a pickled space's keys searched(), refused elsewhere") {
    SweepDir dir;
    std::ofstream(dir.dir / "py.ini") << "[run]\nworkload = python:train.py:train_func\n";
    const std::string hyperopt = "[tune]\nbase = base.ini\nnum_samples = 4\nsearch = hyperopt\nmetric = loss\n";
    const SweepConfig sweep = load(dir.write(hyperopt + "[space]\ntrain.lr = loguniform(1e-4, 1e-1)\n"
                                                        "train.batch_size = qrandint(32, 128, 32)\n"));
    CHECK(sweep.tune.search.value == SearchKind::hyperopt);
    CHECK(sweep.hyperopt.n_initial_points.value == 20);  // Ray's defaults
    CHECK(sweep.hyperopt.gamma.value == 0.25);
    CHECK_THAT(error_of(dir.write(hyperopt + "[space]\ntrain.batch_size = grid(32, 64)\n")),
               Catch::Contains("train.batch_size") && Catch::Contains("choice(...) instead of grid(...)"));
    const std::string native = "[tune]\nbase = py.ini\nnum_samples = 4\nsearch = hyperopt\nmetric = loss\n"
                               "hyperopt.space = space.pickle\n";
    const SweepConfig pickled = load(dir.write(native + "[space]\ntrain.activation = searched()\n"));
    CHECK(pickled.space.front().kind == DomainKind::searched);
    CHECK(pickled.hyperopt.space.value == (dir.dir / "space.pickle").string());  // beside the sweep file
    CHECK_THAT(error_of(dir.write(native + "[space]\ntrain.width = uniform(0, 1)\n")),
               Catch::Contains("train.width") && Catch::Contains("searched()") && Catch::Contains("tune.hyperopt.space"));
    CHECK_THAT(error_of(dir.write(native + "scheduler = pbt\npbt.perturbation_interval = 2\n[space]\ntrain.a = searched()\n")),
               Catch::Contains("scheduler = pbt perturbs"));
    CHECK_THAT(error_of(dir.write("[tune]\nbase = py.ini\nnum_samples = 4\nsearch = hyperopt\nmetric = loss\n"
                                  "[space]\ntrain.a = searched()\n")),
               Catch::Contains("train.a = searched()") && Catch::Contains("set tune.hyperopt.space"));
    CHECK_THAT(error_of(dir.write("[tune]\nbase = py.ini\nnum_samples = 4\n[space]\ntrain.a = searched()\n")),
               Catch::Contains("search = hyperopt"));
    CHECK_THAT(error_of(dir.write(native + "[space]\ntrain.a = searched(1)\n")), Catch::Contains("takes no argument"));
    CHECK_THAT(error_of(dir.write(hyperopt + "hyperopt.space = s.pickle\n[space]\ntrain.lr = searched()\n")),
               Catch::Contains("trainrt's keys"));
    CHECK_THAT(error_of(dir.write("[tune]\nbase = base.ini\nhyperopt.gamma = 0.5\n[space]\ntrain.lr = uniform(0, 1)\n")),
               Catch::Contains("tune.hyperopt.gamma") && Catch::Contains("search = hyperopt"));
}

TEST_CASE("BOHB: its keys and hpbandster's defaults, beside scheduler = hyperband only") {
    SweepDir dir;
    const std::string bohb = "[tune]\nbase = base.ini\nnum_samples = 4\nsearch = bohb\nmetric = loss\n";
    const std::string space = "[space]\ntrain.lr = loguniform(1e-4, 1e-1)\n";
    const SweepConfig sweep = load(dir.write(bohb + "scheduler = hyperband\nbohb.top_n_percent = 20\n" + space));
    CHECK(sweep.tune.search.value == SearchKind::bohb);
    CHECK(sweep.bohb.top_n_percent.value == 20);
    CHECK(sweep.bohb.num_samples.value == 64);  // hpbandster's defaults
    CHECK(sweep.bohb.min_points_in_model.value == 0);
    CHECK_THAT(error_of(dir.write(bohb + space)),
               Catch::Contains("search = bohb") && Catch::Contains("scheduler = fifo") &&
                   Catch::Contains("set scheduler = hyperband"));
    CHECK_THAT(error_of(dir.write(bohb + "scheduler = hyperband\n[space]\ntrain.lr = quniform(0.1, 1, 0.1)\n")),
               Catch::Contains("train.lr") && Catch::Contains("search = bohb takes"));
    CHECK_THAT(error_of(dir.write("[tune]\nbase = base.ini\nbohb.num_samples = 8\n" + space)),
               Catch::Contains("tune.bohb.num_samples") && Catch::Contains("search = bohb"));
}
