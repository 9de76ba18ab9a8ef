#pragma once
// Embedding: a program of your own gets the whole trainrt runtime around its training function —
// config (INI, TRAINRT_* environment, --section.key=value), launch (PMIx, PMI, Slurm), MPI,
// restore, stop signals, time limit, requeue, failure records:
//
//     int main(int argc, char** argv) { return trainrt::run(argc, argv, train, "my_model"); }
//
// `argc/argv` are parsed exactly like the trainrt command's (--config FILE, --help, ...); the
// [run] workload key is ignored. Returns the process exit code (docs/reference/exit-codes.md); never
// throws. Call it once per process.
#include <functional>
#include <vector>

#include "trainrt/config.hpp"

#include "trainrt/session.hpp"

namespace trainrt {

int run(int argc, const char* const argv[], std::function<void(Session&)> train,
        const char* name = "embedded");

// The same with the train.* keys the function accepts (a TRAINRT_KEYS struct's `specs`): they are
// checked, defaulted and shown by --help and --print-config like a plugin's.
int run(int argc, const char* const argv[], std::function<void(Session&)> train, const char* name,
        std::vector<OptionSpec> (*train_keys)());

}  // namespace trainrt
