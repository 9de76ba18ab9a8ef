#include <catch2/catch.hpp>

#include "fake_env.hpp"

#include <filesystem>
#include <fstream>
#include <map>

#include "temp_run_dir.hpp"
#include "workloads/python_environment.hpp"

using namespace trainrt;
namespace fs = std::filesystem;

namespace {
launch::EnvLookup fake(std::map<std::string, std::string> vars) { return testing::fake_env(std::move(vars)); }

void touch(const fs::path& path) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "x";
}
}  // namespace

TEST_CASE("the job's Python environment: TRAINRT_PYTHON, then VIRTUAL_ENV, then CONDA_PREFIX", "[workloads]") {
    auto named = workloads::job_python_environment(
        fake({{"TRAINRT_PYTHON", "/home/u/env/bin/python3"}, {"VIRTUAL_ENV", "/other"}, {"CONDA_PREFIX", "/c"}}));
    REQUIRE(named);
    CHECK(named->prefix == "/home/u/env");
    CHECK(named->named_by == "TRAINRT_PYTHON=/home/u/env/bin/python3");
    named = workloads::job_python_environment(fake({{"VIRTUAL_ENV", "/home/u/venv/"}, {"CONDA_PREFIX", "/c"}}));
    REQUIRE(named);
    CHECK(named->prefix == "/home/u/venv/");
    CHECK(named->named_by == "VIRTUAL_ENV=/home/u/venv/");
    named = workloads::job_python_environment(fake({{"TRAINRT_PYTHON", ""}, {"CONDA_PREFIX", "/opt/conda/envs/x"}}));
    REQUIRE(named);
    CHECK(named->prefix == "/opt/conda/envs/x");
    CHECK_FALSE(workloads::job_python_environment(fake({})));
}

TEST_CASE("an environment's own build of a component is found under its site-packages", "[workloads]") {
    testing::TempRunDir dir;
    const fs::path root = dir.path();
    const workloads::PythonEnvironment environment{root.string(), "VIRTUAL_ENV=" + root.string()};
    CHECK_FALSE(workloads::environment_component(environment, "libtrainrt_python.so.0.1"));
    fs::create_directories(root / "lib" / "python3.12" / "site-packages" / "numpy");
    CHECK_FALSE(workloads::environment_component(environment, "libtrainrt_python.so.0.1"));
    touch(root / "lib" / "python3.12" / "site-packages" / "trainrt" / "libtrainrt_python.so.0.1");
    CHECK(workloads::environment_component(environment, "libtrainrt_python.so.0.1") ==
          (root / "lib" / "python3.12" / "site-packages" / "trainrt" / "libtrainrt_python.so.0.1").string());
    CHECK_FALSE(workloads::environment_component(environment, "libtrainrt_python.so.0.2"));
    const workloads::PythonEnvironment missing{(root / "nowhere").string(), "VIRTUAL_ENV=nowhere"};
    CHECK_FALSE(workloads::environment_component(missing, "libtrainrt_python.so.0.1"));
}
