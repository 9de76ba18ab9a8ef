#pragma once
// The one declaration of every built-in setting (docs/reference/configuration.md): one line per key, from
// which come the typed section structs below (cfg.checkpoint.async.value), the OptionSpecs the
// loader validates against, --help, --print-config, the Python view (trainrt.get_config()) and
// the documentation's key table (docs/reference/configuration.md) (`trainrt --keys-markdown`, checked by tests/config/). A workload's
// [train] keys are declared the same way beside its code (include/trainrt/keys.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trainrt/data.hpp"
#include "trainrt/keys.hpp"
#include "log/log.hpp"

namespace trainrt {

enum class Backend { automatic, mpi, nccl, gloo, trainrt };
enum class CheckpointLayout { file_per_rank, shared };
enum class CheckpointLevels { pfs, local, partner };
enum class SnapshotMode { copy, background };
enum class ReplicatedReads { automatic, exchange, files };
enum class ScoreOrder { max, min };
enum class ProgressSetting { automatic, tty, lines, off };
enum class RequeuePolicy { automatic, never };
enum class NonFinitePolicy { fail, ignore };
enum class LogLevel { debug, info, warning, error };

// [stop] signals: signal numbers and their names as configured ("USR2", without SIG).
struct SignalList {
    std::vector<int> numbers;
    std::vector<std::string> names;
};
// A number of seconds >= 0, or auto (nullopt): [stop] time_margin, [checkpoint] interval.
struct SecondsOrAuto {
    std::optional<double> seconds;
};

template <> struct EnumNames<Backend> { static const std::vector<std::pair<std::string, Backend>>& get(); };
template <> struct EnumNames<Shuffle> { static const std::vector<std::pair<std::string, Shuffle>>& get(); };
template <> struct EnumNames<CheckpointLayout> {
    static const std::vector<std::pair<std::string, CheckpointLayout>>& get();
};
template <> struct EnumNames<CheckpointLevels> {
    static const std::vector<std::pair<std::string, CheckpointLevels>>& get();
};
template <> struct EnumNames<SnapshotMode> {
    static const std::vector<std::pair<std::string, SnapshotMode>>& get();
};
template <> struct EnumNames<ReplicatedReads> {
    static const std::vector<std::pair<std::string, ReplicatedReads>>& get();
};
template <> struct EnumNames<ScoreOrder> { static const std::vector<std::pair<std::string, ScoreOrder>>& get(); };
template <> struct EnumNames<ProgressSetting> {
    static const std::vector<std::pair<std::string, ProgressSetting>>& get();
};
template <> struct EnumNames<RequeuePolicy> {
    static const std::vector<std::pair<std::string, RequeuePolicy>>& get();
};
template <> struct EnumNames<NonFinitePolicy> {
    static const std::vector<std::pair<std::string, NonFinitePolicy>>& get();
};
template <> struct EnumNames<LogLevel> { static const std::vector<std::pair<std::string, LogLevel>>& get(); };
template <> struct KeyType<SignalList> {
    static constexpr ValueKind kind = ValueKind::string;
    static SignalList read(const JobConfig& config, const std::string& key);
};
template <> struct KeyType<SecondsOrAuto> {
    static constexpr ValueKind kind = ValueKind::string;
    static SecondsOrAuto read(const JobConfig& config, const std::string& key);
};

// clang-format off
#define TRAINRT_RUN_KEYS(KEY)                                                                                   \
    KEY(name, std::string, "trainrt", a_name(),                                                                 \
        "run name: the run directory is storage_path/name")                                                     \
    KEY(storage_path, std::string, "runs", a_path(),                                                            \
        "where run directories live (a shared filesystem on a cluster)")                                       \
    KEY(seed, std::int64_t, "0", at_least(0),                                                                   \
        "seed for weight init and data shuffling (same seed, same world size: bitwise-identical results)")    \
    KEY(workload, std::string, "", any_value(),                                                                 \
        "the training function: a built-in workload (trainrt --help lists them), plugin:/path/lib.so[:name] "  \
        "or python:FILE.py:FUNC")

#define TRAINRT_SCALING_KEYS(KEY)                                                                               \
    KEY(use_gpu, bool, "false", any_value(), "one GPU per rank (by local rank)")                                \
    KEY(backend, Backend, "auto", any_value(),                                                                  \
        "collective backend: auto (MPI on CPU, NCCL on GPU), mpi, nccl; for a Python function's "              \
        "torch.distributed also gloo, and trainrt (trainrt's MPI process group)")                              \
    KEY(bucket_mb, double, "2", between(0.001, 1024),                                                           \
        "gradient allreduce bucket size in MiB (small tensors fused into buckets)")

#define TRAINRT_DATA_KEYS(KEY)                                                                                  \
    KEY(path, std::string, "", a_path(), "HDF5 dataset (written by trainrt data import)")                      \
    KEY(shuffle, Shuffle, "none", any_value(),                                                                  \
        "training order each epoch, drawn from run.seed and the epoch: none (file order), global (a true "     \
        "permutation), blocks (chunk-sized blocks permuted, shuffled inside data.shuffle_buffer samples); "    \
        "true = global, false = none")                                                                          \
    KEY(prefetch_batches, std::int64_t, "2", between(0, 1024),                                                  \
        "batches a background reader keeps ready per rank (0: read on the training thread)")                   \
    KEY(shuffle_buffer, std::int64_t, "0", at_least(0), "shuffle = blocks: samples shuffled together (0: 16 chunks' worth)") \
    KEY(features, std::string, "", any_value(), "the feature column (empty: the dataset file's feature_column)") \
    KEY(label, std::string, "", any_value(), "the label column (empty: the dataset file's label_column)")

#define TRAINRT_CHECKPOINT_KEYS(KEY)                                                                            \
    KEY(layout, CheckpointLayout, "file_per_rank", any_value(),                                                 \
        "file_per_rank (each rank its own file; fastest on Lustre) or shared (one file through parallel "     \
        "HDF5 / MPI-IO)")                                                                                       \
    KEY(num_to_keep, std::int64_t, "0", at_least(0),                                                            \
        "keep the best N checkpoints by score_attribute (and always the latest); 0 keeps all")                 \
    KEY(score_attribute, std::string, "", any_value(),                                                          \
        "reported metric that ranks checkpoints for num_to_keep (unset: by recency)")                          \
    KEY(score_order, ScoreOrder, "max", any_value(), "whether a higher (max) or lower (min) score_attribute is better") \
    KEY(async, bool, "false", any_value(),                                                                      \
        "copy the state to host memory and write it in the background (file_per_rank only)")                  \
    KEY(snapshot, SnapshotMode, "copy", any_value(),                                                            \
        "with async: copy (report() copies the state before it returns) or background (the copy runs beside "  \
        "the next step; the function calls session.await_snapshot() before it changes the state: LibTorch's "   \
        "prepare_model does at the end of backward, the built-in workloads before each step)")                 \
    KEY(spread_replicated, bool, "true", any_value(),                                                           \
        "replicated tensors of 1 MiB or more (DDP weights, optimizer moments) are written once in all, in "    \
        "row ranges over the ranks (each ~1/N); smaller ones by rank 0; false: rank 0 writes them all")                                    \
    KEY(replicated_reads, ReplicatedReads, "auto", any_value(),                                                 \
        "restore of replicated tensors (file_per_rank, same world size): exchange (each rank reads its own "    \
        "file and sends its parts to the others over MPI: the filesystem serves them once), files (every "       \
        "rank reads every file that holds a part), auto (exchange when the job spans several nodes or the "     \
        "filesystem is not trusted coherent)")                                                                   \
    KEY(every_steps, std::int64_t, "0", at_least(0),                                                            \
        "also checkpoint every N training steps (0: at the end of each epoch only)")                           \
    KEY(interval, SecondsOrAuto, "0", any_value(),                                                              \
        "also checkpoint when this many seconds passed since the last checkpoint, at the next step boundary "  \
        "(built-in workloads; 0: off); auto: Young/Daly's sqrt(2 x C x failure.mtbf), C the measured "         \
        "checkpoint stall (the run's last checkpoints, else the first one taken at once)")                     \
    KEY(levels, CheckpointLevels, "pfs", any_value(),                                                            \
        "pfs: every checkpoint on the run directory's filesystem; local,pfs: every one in local_dir on each "  \
        "node, every pfs_every-th and each stop's also in the run directory; local,partner,pfs: and a copy of " \
        "each rank's file on the next node, so a lost node's state survives (file_per_rank, async = false)")   \
    KEY(local_dir, std::string, "/dev/shm", any_value(),                                                        \
        "node-local directory of the local level (memory or a local disk); %h is the node's hostname")        \
    KEY(pfs_every, std::int64_t, "10", at_least(1),                                                             \
        "with local levels: every Nth checkpoint is also written to the run directory (and every stop's)")   \
    KEY(resume_from, std::string, "", a_path(), "resume from this checkpoint directory instead of the newest valid one") \
    KEY(alignment_mb, double, "1", at_least(0), "shared layout: align datasets to this many MiB (the stripe size)") \
    KEY(stripe_count, std::int64_t, "0", at_least(0), "shared layout: ROMIO striping_factor hint (0: filesystem default)") \
    KEY(stripe_size_mb, double, "0", at_least(0), "shared layout: ROMIO striping_unit hint in MiB (0: filesystem default)")

#define TRAINRT_STOP_KEYS(KEY)                                                                                  \
    KEY(signals, SignalList, "USR2,TERM", any_value(),                                                          \
        "signals that request a stop: checkpoint at the next step and exit (comma list of USR1, USR2, TERM, "  \
        "INT, HUP, QUIT, XCPU, ALRM; USR1 is left to NCCL)")                                                    \
    KEY(time_margin, SecondsOrAuto, "auto", any_value(),                                                           \
        "stop this many seconds before the Slurm time limit; auto: 10 s + 2 x the slowest recent step + 2 x "  \
        "the slowest recent checkpoint")                                                                        \
    KEY(pause_by, std::string, "", one_of({"epoch", "training_iteration"}),                                     \
        "set by `trainrt tune` for its trials (ASHA): the reported value (a row's epoch, or the report count) " \
        "at whose pause_at points the run waits for the sweep's verdict (decisions/<point> in the run "        \
        "directory): go on, or end here as finished; empty: never")                                             \
    KEY(pause_at, std::string, "", any_value(),                                                                 \
        "with pause_by: the points, a comma list of integers in increasing order (the scheduler's rungs)")     \
    KEY(pause_metric, std::string, "", any_value(),                                                             \
        "with pause_by: only a row that reports this metric (the sweep's) pauses, as the scheduler decides "   \
        "only on such rows")                                                                                    \
    KEY(criteria, std::string, "", any_value(),                                                                 \
        "end the run as finished at the first report where any of these holds: a comma list of METRIC>=VALUE " \
        "(a reported metric, training_iteration or time_total_s; Ray's RunConfig(stop={...})); empty: none")

#define TRAINRT_FAILURE_KEYS(KEY)                                                                               \
    KEY(max_failures, int, "3", at_least(-1),                                                                   \
        "give up after more failures than this (crashed rank, dead node, hung collective), counted across "    \
        "relaunches and requeues; -1: never")                                                                   \
    KEY(max_launch_failures, int, "5", at_least(0),                                                             \
        "step launches that fail before trainrt starts (srun cannot create the step, a node cannot start it), " \
        "in a row: retried after 2, 4, 8 ... 60 s, not counted in max_failures; then give up")                 \
    KEY(min_nodes, int, "1", at_least(1),                                                                       \
        "after a node failure, relaunch on the nodes left only if at least this many are; fewer: the "          \
        "supervisor requeues the job (needs --requeue) to start again on a whole allocation")                   \
    KEY(requeue, RequeuePolicy, "auto", any_value(),                                                            \
        "auto: after a stop for the time limit or a preemption, rank 0 requeues the job (scontrol requeue); "  \
        "never: just checkpoint and exit")                                                                      \
    KEY(collective_timeout, double, "600", at_least(0),                                                         \
        "seconds a collective may block before the watchdog ends the step as failed (0: no watchdog)")         \
    KEY(peer_timeout, double, "60", at_least(0),                                                                \
        "seconds a node may go without a heartbeat (heartbeats/<host> in the run directory, rewritten every "   \
        "timeout/6 s, 0.5-10 s, by the node's first process) while the others are blocked in a collective: "   \
        "they end the step (a peer_timeout failure naming the node) and the relaunch excludes it, long before " \
        "Slurm's SlurmdTimeout (300 s by default); 0: no heartbeats. Lower it for faster recovery, at the "     \
        "risk of a false alarm when the filesystem stalls longer than it")                                      \
    KEY(peer_links, bool, "true", any_value(),                                                                  \
        "with heartbeats on: nodes' first processes keep TCP links in a ring, and a link closed without a "     \
        "goodbye ends the step at once (a peer_lost failure naming the node) instead of after peer_timeout; "  \
        "false: a lost node is noticed by its silent heartbeat only")                                           \
    KEY(mtbf, double, "0", at_least(0),                                                                         \
        "mean seconds between failures of the job (a node lost, a crash), for checkpoint.interval = auto; "   \
        "0: learned from the run's record, (T + M0) / (k + 1) for k failures in T s of attempts, "              \
        "M0 = 30 days divided by the job's nodes (M0 itself while the record has no failure)")                   \
    KEY(on_nonfinite, NonFinitePolicy, "fail", any_value(),                                                     \
        "fail: a report() with a NaN or infinite metric ends the run (exit 7) without committing its "         \
        "checkpoint, so the latest checkpoint is the last finite one; ignore: go on")

#define TRAINRT_METRICS_KEYS(KEY)                                                                               \
    KEY(straggler_threshold, double, "1.5", at_least(0),                                                        \
        "log a rank as straggling when its own work in an iteration (time not spent waiting in collectives) "  \
        "exceeds this many times the other ranks' mean; 0 turns it off")                                       \
    KEY(progress_interval, double, "30", at_least(0), "seconds between progress lines when stdout is not a terminal") \
    KEY(progress, ProgressSetting, "auto", any_value(),                                                         \
        "auto (a redrawn line on a terminal, plain lines otherwise), tty, lines, off")
#define TRAINRT_LOG_KEYS(KEY)                                                                                   \
    KEY(level, LogLevel, "info", any_value(),                                                                   \
        "what trainrt prints: debug, info (progress, decisions), warning, error (one line per refusal)")
#define TRAINRT_TRACKING_KEYS(KEY)                                                                              \
    KEY(mlflow_uri, std::string, "", any_value(),                                                               \
        "an MLflow tracking URI (file:/path/mlruns, sqlite:///path.db, http://host:5000): when each job step "   \
        "ends, rank 0 sends the run's new result rows, its config and checkpoint paths there; empty: off")      \
    KEY(tensorboard_dir, std::string, "", any_value(),                                                            \
        "a directory for TensorBoard event files: when each job step ends, rank 0 writes the run's new result "  \
        "rows as scalars under <tensorboard_dir>/<run.name> (<tensorboard_dir>/<experiment>/<run.name>); empty: off") \
    KEY(experiment, std::string, "", any_value(),                                                               \
        "the MLflow experiment (empty: run.name) and TensorBoard's grouping directory (empty: none)")
// clang-format on

TRAINRT_KEYS(RunSettings, "run", TRAINRT_RUN_KEYS);
TRAINRT_KEYS(ScalingSettings, "scaling", TRAINRT_SCALING_KEYS);
TRAINRT_KEYS(DataSettings, "data", TRAINRT_DATA_KEYS);
TRAINRT_KEYS(CheckpointSettings, "checkpoint", TRAINRT_CHECKPOINT_KEYS);
TRAINRT_KEYS(StopSettings, "stop", TRAINRT_STOP_KEYS);
TRAINRT_KEYS(FailureSettings, "failure", TRAINRT_FAILURE_KEYS);
TRAINRT_KEYS(MetricsSettings, "metrics", TRAINRT_METRICS_KEYS);
TRAINRT_KEYS(LogSettings, "log", TRAINRT_LOG_KEYS);
TRAINRT_KEYS(TrackingSettings, "tracking", TRAINRT_TRACKING_KEYS);

// Every built-in section, typed. Read once per process after the config is loaded.
struct Settings {
    RunSettings run;
    ScalingSettings scaling;
    DataSettings data;
    CheckpointSettings checkpoint;
    StopSettings stop;
    FailureSettings failure;
    MetricsSettings metrics;
    LogSettings log;
    TrackingSettings tracking;

    static Settings read(const JobConfig& config);
    static Settings defaults();
    // visitor(section_name, section) per section, in order.
    template <class Visitor> void visit(Visitor&& visitor) const {
        visitor(RunSettings::section_name, run);
        visitor(ScalingSettings::section_name, scaling);
        visitor(DataSettings::section_name, data);
        visitor(CheckpointSettings::section_name, checkpoint);
        visitor(StopSettings::section_name, stop);
        visitor(FailureSettings::section_name, failure);
        visitor(MetricsSettings::section_name, metrics);
        visitor(LogSettings::section_name, log);
        visitor(TrackingSettings::section_name, tracking);
    }
};

namespace config {

// The built-in sections' names, in order; TRAINRT_<SECTION>_<KEY> is read for these and [train].
const std::vector<std::string>& sections();

// Every built-in key's spec, section by section in declaration order.
std::vector<OptionSpec> builtin_options();

// [log] level as the logger's level (log/log.hpp).
log::Level log_level_of(LogLevel level);

// "USR2" / "SIGUSR2" / "12" -> 12; nullopt for anything that is not a catchable stop signal.
std::optional<int> stop_signal_number(const std::string& name);

}  // namespace config
}  // namespace trainrt
