#include "config/loader.hpp"

#include "config/lifecycle.hpp"

namespace trainrt::config {

const std::vector<std::string>& sections() {
    static const std::vector<std::string> names = {"run", "scaling", "data", "checkpoint", "stop", "failure", "metrics", "train"};
    return names;
}

namespace {

std::vector<OptionSpec> checkpoint_options() {
    OptionSpec layout{"checkpoint.layout", "file_per_rank", ValueKind::choice,
                      "file_per_rank (each rank its own file; fastest on Lustre) or shared (one "
                      "file through parallel HDF5 / MPI-IO)"};
    layout.choices = {"file_per_rank", "shared"};
    OptionSpec keep{"checkpoint.num_to_keep", "0", ValueKind::integer,
                    "keep the best N checkpoints by score_attribute (and always the latest); 0 keeps all"};
    keep.min = 0;
    OptionSpec order{"checkpoint.score_order", "max", ValueKind::choice,
                     "whether a higher (max) or lower (min) score_attribute is better"};
    order.choices = {"max", "min"};
    OptionSpec every{"checkpoint.every_steps", "0", ValueKind::integer,
                     "also checkpoint every N training steps (0: at the end of each epoch only)"};
    every.min = 0;
    OptionSpec alignment{"checkpoint.alignment_mb", "1", ValueKind::real,
                         "shared layout: align datasets to this many MiB (the stripe size)"};
    alignment.min = 0;
    OptionSpec stripes{"checkpoint.stripe_count", "0", ValueKind::integer,
                       "shared layout: ROMIO striping_factor hint (0: filesystem default)"};
    stripes.min = 0;
    OptionSpec stripe_size{"checkpoint.stripe_size_mb", "0", ValueKind::real,
                           "shared layout: ROMIO striping_unit hint in MiB (0: filesystem default)"};
    stripe_size.min = 0;
    return {layout, keep,
            {"checkpoint.score_attribute", "", ValueKind::string,
             "reported metric that ranks checkpoints for num_to_keep (unset: by recency)"},
            order,
            {"checkpoint.async", "false", ValueKind::boolean,
             "copy the state to host memory and write it in the background (file_per_rank only)"},
            every,
            {"checkpoint.resume_from", "", ValueKind::path,
             "resume from this checkpoint directory instead of the newest valid one"},
            alignment, stripes, stripe_size};
}

std::vector<OptionSpec> metrics_options() {
    OptionSpec straggler{"metrics.straggler_threshold", "1.5", ValueKind::real,
                         "log a rank as straggling when its own work in an iteration (time not "
                         "spent waiting in collectives) exceeds this many times the other ranks' "
                         "mean; 0 turns it off"};
    straggler.min = 0;
    OptionSpec interval{"metrics.progress_interval", "30", ValueKind::real,
                        "seconds between progress lines when stdout is not a terminal"};
    interval.min = 0;
    OptionSpec progress{"metrics.progress", "auto", ValueKind::choice,
                        "auto (a redrawn line on a terminal, plain lines otherwise), tty, lines, off"};
    progress.choices = {"auto", "tty", "lines", "off"};
    return {straggler, interval, progress};
}

}  // namespace

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
                       "collective backend: auto (MPI on CPU, NCCL on GPU), mpi, nccl; for a Python "
                       "function's torch.distributed also gloo, and trainrt (trainrt's MPI process group)"};
    backend.choices = {"auto", "mpi", "nccl", "gloo", "trainrt"};
    OptionSpec shuffle{"data.shuffle", "none", ValueKind::choice,
                       "training order each epoch, drawn from run.seed and the epoch: none (file order), "
                       "global (a true permutation), blocks (chunk-sized blocks permuted, shuffled inside "
                       "data.shuffle_buffer samples); true = global, false = none"};
    shuffle.choices = {"none", "global", "blocks", "true", "false"};
    OptionSpec prefetch{"data.prefetch_batches", "2", ValueKind::integer,
                        "batches a background reader keeps ready per rank (0: read on the training thread)"};
    prefetch.min = 0;
    prefetch.max = 1024;
    OptionSpec shuffle_buffer{"data.shuffle_buffer", "0", ValueKind::integer,
                              "shuffle = blocks: samples shuffled together (0: 16 chunks' worth)"};
    shuffle_buffer.min = 0;
    std::vector<OptionSpec> options = {
        {"run.name", "trainrt", ValueKind::name, "run name: the run directory is storage_path/name"},
        {"run.storage_path", "runs", ValueKind::path,
         "where run directories live (a shared filesystem on a cluster)"},
        seed,
        {"run.workload", "fashion_mlp", ValueKind::string, "the training function to run"},
        {"scaling.use_gpu", "false", ValueKind::boolean, "one GPU per rank (by local rank)"},
        backend,
        bucket,
        {"data.path", "data/fashion-mnist.h5", ValueKind::path,
         "HDF5 dataset (trainrt data import fashion-mnist writes it)"},
        shuffle,
        prefetch,
        shuffle_buffer,
        {"data.features", "", ValueKind::string,
         "the feature column (empty: the dataset file's feature_column)"},
        {"data.label", "", ValueKind::string, "the label column (empty: the dataset file's label_column)"},
    };
    std::vector<OptionSpec> checkpoint = checkpoint_options();
    options.insert(options.end(), checkpoint.begin(), checkpoint.end());
    std::vector<OptionSpec> lifecycle = lifecycle_options();
    options.insert(options.end(), lifecycle.begin(), lifecycle.end());
    std::vector<OptionSpec> metrics = metrics_options();
    options.insert(options.end(), metrics.begin(), metrics.end());
    return options;
}

}  // namespace trainrt::config
