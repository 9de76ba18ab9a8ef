// The program arguments the supervisor reads the job from (supervised_job.hpp): a trainrt binary's
// are all of them; a Python interpreter's own options and its script are not trainrt's.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "supervise/supervised_job.hpp"

using trainrt::supervise::program_arguments;
using Args = std::vector<std::string>;

TEST_CASE("supervise: a trainrt program's arguments are all the job's", "[supervise]") {
    CHECK(program_arguments({"trainrt", "--config", "job.ini", "--run.name=a"}) == Args{"--config", "job.ini", "--run.name=a"});
    CHECK(program_arguments({"/opt/bin/trainrt"}).empty());
    CHECK(program_arguments({}).empty());
}

TEST_CASE("supervise: a Python script's interpreter options and script are not the job's", "[supervise]") {
    CHECK(program_arguments({"python3", "train.py", "--run.name=a"}) == Args{"--run.name=a"});
    CHECK(program_arguments({"/env/bin/python3.12", "-u", "-B", "dir/train.py", "--failure.max_failures=2"}) ==
          Args{"--failure.max_failures=2"});
    CHECK(program_arguments({"python", "train.py"}).empty());
    CHECK(program_arguments({"python3"}).empty());
}
