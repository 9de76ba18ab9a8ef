#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/loader.hpp"
#include "config/values.hpp"
#include "trainrt/error.hpp"
#include "workloads/registry.hpp"

using namespace trainrt;

namespace {

struct Args {
    std::vector<std::string> words;
    std::vector<const char*> pointers;
    explicit Args(std::vector<std::string> w) : words(std::move(w)) {
        pointers.push_back("trainrt");
        for (const auto& word : words) pointers.push_back(word.c_str());
    }
    int argc() const { return static_cast<int>(pointers.size()); }
    const char* const* argv() const { return pointers.data(); }
};

std::string write_ini(const std::string& text) {
    static int counter = 0;
    auto path = std::filesystem::temp_directory_path() /
                ("trainrt_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".ini");
    std::ofstream(path) << text;
    return path.string();
}

// `words` as a command line for the fashion_mlp workload (first, so that words may override it).
config::Loaded load(std::vector<std::string> words) {
    words.insert(words.begin(), "--run.workload=fashion_mlp");
    Args args(std::move(words));
    return config::load(args.argc(), args.argv(), workloads::keys_by_workload());
}

std::string error_of(std::vector<std::string> words) {
    try {
        load(std::move(words));
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "";
}

}  // namespace

TEST_CASE("defaults, file, environment and command line merge in that order", "[config]") {
    std::string ini = write_ini("[run]\nname = from_file\nseed = 3\n[train]\nepochs = 5\nlr = 0.5\n");
    ::setenv("TRAINRT_TRAIN_EPOCHS", "7", 1);
    ::setenv("TRAINRT_SLURM_DIR", "/not/config", 1);  // not a config section: ignored
    auto loaded = load({"--config", ini, "--train.lr=0.25"});
    ::unsetenv("TRAINRT_TRAIN_EPOCHS");
    ::unsetenv("TRAINRT_SLURM_DIR");
    const JobConfig& config = loaded.config;
    CHECK(config.get("run.name") == "from_file");
    CHECK(config.source("run.name") == ini + ":2");
    CHECK(config.get_int("run.seed") == 3);
    CHECK(config.get_int("train.epochs") == 7);
    CHECK(config.source("train.epochs") == "env TRAINRT_TRAIN_EPOCHS");
    CHECK(config.get_double("train.lr") == 0.25);
    CHECK(config.source("train.lr") == "command line");
    CHECK(config.get_int("train.batch_size") == 64);
    CHECK(config.source("train.batch_size") == "default");
    CHECK(config.get("data.shuffle") == "none");
}

TEST_CASE("a misspelled key names the file, the line and a close match", "[config]") {
    std::string ini = write_ini("[train]\nepochs = 2\nepoch = 3\n");
    std::string message = error_of({"--config", ini});
    CHECK_THAT(message, Catch::Contains("unknown key 'train.epoch'"));
    CHECK_THAT(message, Catch::Contains(ini + ":3"));
    CHECK_THAT(message, Catch::Contains("did you mean 'train.epochs'"));
}

TEST_CASE("a command-line train key close to the file's is refused for a free-form workload", "[config]") {
    std::string ini = write_ini("[run]\nworkload = python:train.py:train_func\n[train]\nepochs = 2\nlr = 0.1\n");
    Args misspelt({"--config", ini, "--train.epoch=3"});
    try {
        config::load(misspelt.argc(), misspelt.argv(), workloads::keys_by_workload());
        FAIL("--train.epoch=3 was accepted beside train.epochs");
    } catch (const ConfigError& error) {
        CHECK_THAT(error.what(), Catch::Contains("train.epoch (command line) is no key"));
        CHECK_THAT(error.what(), Catch::Contains("did you mean 'train.epochs' (" + ini + ":4)"));
    }
    Args overriding({"--config", ini, "--train.epochs=3", "--train.momentum=0.9"});
    const JobConfig config = config::load(overriding.argc(), overriding.argv(), workloads::keys_by_workload()).config;
    CHECK(config.get_int("train.epochs") == 3);
    CHECK(config.get_double("train.momentum") == 0.9);  // a new key unlike any other: the function may read it
}

TEST_CASE("a key the program names only catches a close command-line key and sets nothing", "[config]") {
    const config::ProgramSettings reads{{"train.epochs", config::named_only("the function's train_loop_config")}};
    Args misspelt({"--train.epoch=3"});
    try {
        config::load(misspelt.argc(), misspelt.argv(), workloads::keys_by_workload(), "train_func", reads);
        FAIL("--train.epoch=3 was accepted beside the function's epochs");
    } catch (const ConfigError& error) {
        CHECK_THAT(error.what(), Catch::Contains("did you mean 'train.epochs' (the function's train_loop_config)"));
    }
    Args right({"--train.epochs=3"});
    CHECK(config::load(right.argc(), right.argv(), workloads::keys_by_workload(), "train_func", reads)
              .config.get_int("train.epochs") == 3);
    Args none({"--run.seed=1"});
    CHECK_FALSE(config::load(none.argc(), none.argv(), workloads::keys_by_workload(), "train_func", reads)
                    .config.has("train.epochs"));
}

TEST_CASE("a program's own arguments are left to it; trainrt's keys on its command line are read", "[config]") {
    Args script({"--smoke-test", "-n", "4", "data.csv", "--train.lr=0.25", "--run.seed=3"});
    const JobConfig config = config::load(script.argc(), script.argv(), workloads::keys_by_workload(), "train_func").config;
    CHECK(config.get_double("train.lr") == 0.25);
    CHECK(config.get_int("run.seed") == 3);
    CHECK_FALSE(config.has("smoke-test"));
    CHECK_THAT(error_of({"--smoke-test"}), Catch::Contains("smoke-test"));  // trainrt's own command line: refused
}

TEST_CASE("a misspelled section is an unknown key with a suggestion", "[config]") {
    std::string message = error_of({"--trian.epochs=2"});
    CHECK_THAT(message, Catch::Contains("unknown key 'trian.epochs' (command line)"));
    CHECK_THAT(message, Catch::Contains("did you mean 'train.epochs'"));
}

TEST_CASE("bad values say what is accepted", "[config]") {
    CHECK_THAT(error_of({"--train.epochs=0"}), Catch::Contains("expected an integer >= 1"));
    CHECK_THAT(error_of({"--train.epochs=two"}), Catch::Contains("bad value 'two' for train.epochs"));
    CHECK_THAT(error_of({"--scaling.backend=ucx"}), Catch::Contains("one of auto, mpi, nccl, gloo, trainrt"));
    CHECK_THAT(error_of({"--data.shuffle=maybe"}), Catch::Contains("one of none, global, blocks"));
    CHECK_THAT(error_of({"--train.lr=-1"}), Catch::Contains("train.lr"));
}

TEST_CASE("missing config file and duplicate keys are errors", "[config]") {
    CHECK_THAT(error_of({"--config", "/nonexistent/job.ini"}),
               Catch::Contains("cannot read config file '/nonexistent/job.ini'"));
    std::string ini = write_ini("[train]\nepochs = 2\nepochs = 3\n");
    CHECK_THAT(error_of({"--config", ini}), Catch::Contains("set twice"));
}

TEST_CASE("an invalid INI line is located", "[config]") {
    std::string ini = write_ini("[train]\nepochs = 2\nthis line has no equals\n");
    std::string message = error_of({"--config", ini});
    CHECK_THAT(message, Catch::Contains(ini + ":3"));
}

TEST_CASE("unknown workload suggests a built-in one", "[config]") {
    // Not one of libtrainrt's: its keys are checked once it is found, and finding it says what is close.
    CHECK(error_of({"--run.workload=fashion_mpl", "--train.anything=1"}).empty());
    try {
        workloads::find("fashion_mpl");
        FAIL("an unknown workload was found");
    } catch (const ConfigError& error) {
        CHECK_THAT(error.what(), Catch::Contains("did you mean 'fashion_mlp'"));
    }
}

TEST_CASE("a job that names no workload is one line", "[config]") {
    Args args({"--run.name=x"});
    try {
        config::load(args.argc(), args.argv(), workloads::keys_by_workload());
        FAIL("no workload accepted");
    } catch (const ConfigError& error) {
        CHECK_THAT(error.what(), Catch::Contains("run.workload is not set"));
    }
}

TEST_CASE("a declaration gives typed values, key names and sources", "[config]") {
    std::string ini = write_ini("[data]\nshuffle = true\n[failure]\nrequeue = never\n");
    const Settings settings = Settings::read(load({"--config", ini, "--scaling.bucket_mb=4"}).config);
    CHECK(settings.data.shuffle.value == Shuffle::global);  // the alias, mapped by the declaration's names
    CHECK(settings.data.shuffle.key == "data.shuffle");
    CHECK(settings.data.shuffle.source == ini + ":2");
    CHECK(settings.failure.requeue.value == RequeuePolicy::never);
    CHECK(settings.scaling.bucket_mb.value == Approx(4.0));
    CHECK(settings.scaling.bucket_mb.source == "command line");
    CHECK(settings.failure.peer_timeout.value == Approx(60.0));
    CHECK(settings.failure.peer_timeout.source == "default");
    CHECK(DataSettings::shuffle_key() == "data.shuffle");
    CHECK(name_of(Shuffle::global) == "global");
    const Settings defaults = Settings::defaults();
    CHECK(defaults.run.workload.value.empty());
    CHECK(defaults.stop.signals.value.names == std::vector<std::string>{"USR2", "TERM"});
    CHECK_FALSE(defaults.stop.time_margin.value.seconds.has_value());
}

TEST_CASE("help lists every key with its default", "[config]") {
    std::string help = config::help_text(workloads::keys_by_workload());
    for (const char* key : {"run.name", "run.storage_path", "run.seed", "run.workload",
                            "scaling.use_gpu", "scaling.backend", "data.path", "data.shuffle",
                            "train.epochs", "train.batch_size", "train.lr", "train.init_weights"})
        CHECK_THAT(help, Catch::Contains(key));
}

TEST_CASE("closest_match finds near keys only", "[config]") {
    std::vector<std::string> keys = {"train.epochs", "train.lr", "run.name"};
    CHECK(config::closest_match("train.epoch", keys) == "train.epochs");
    CHECK(config::closest_match("completely.different", keys).empty());
}
