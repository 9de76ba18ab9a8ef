#include "config/loader.hpp"

namespace trainrt::config {

const std::vector<std::string>& sections() {
    static const std::vector<std::string> names = {"run", "scaling", "data", "train"};
    return names;
}

std::vector<OptionSpec> builtin_options() {
    OptionSpec seed{"run.seed", "0", ValueKind::integer,
                    "seed for weight init and data shuffling (same seed, same world size: "
                    "bitwise-identical results)"};
    seed.min = 0;
    OptionSpec bucket{"scaling.bucket_mb", "2", ValueKind::real,
                      "gradient allreduce bucket size in MiB (small tensors fused into buckets)"};
    bucket.min = 0.001;
    bucket.max = 1024;
    OptionSpec backend{"scaling.backend", "auto", ValueKind::choice,
                       "collective backend: auto (MPI on CPU, NCCL on GPU), mpi, nccl"};
    backend.choices = {"auto", "mpi", "nccl"};
    return {
        {"run.name", "trainrt", ValueKind::string, "run name: the run directory is storage_path/name"},
        {"run.storage_path", "runs", ValueKind::path,
         "where run directories live (a shared filesystem on a cluster)"},
        seed,
        {"run.workload", "fashion_mlp", ValueKind::string, "the training function to run"},
        {"scaling.use_gpu", "false", ValueKind::boolean, "one GPU per rank (by local rank)"},
        backend,
        bucket,
        {"data.path", "data/fashion-mnist.h5", ValueKind::path,
         "HDF5 dataset (trainrt data import fashion-mnist writes it)"},
        {"data.shuffle", "false", ValueKind::boolean,
         "reshuffle the training samples every epoch from run.seed"},
    };
}

}  // namespace trainrt::config
