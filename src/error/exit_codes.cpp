// The one table of exit codes (trainrt/error.hpp), with names and meanings: `trainrt
// --exit-codes` prints it for shell scripts, trainrt.exit_codes gives it to Python, and the
// docs/reference/exit-codes.md's table is checked against it (tests/cli/).
#include "trainrt/error.hpp"

namespace trainrt {

const std::vector<ExitCodeName>& exit_code_table() {
    static const std::vector<ExitCodeName> table = {
        {"exit", "finished", exit_codes::finished, "finished"},
        {"exit", "internal", exit_codes::internal, "internal error (a bug: please report it with the message)"},
        {"exit", "config", exit_codes::config,
         "usage or configuration error (also: a batch smaller than the world, GPU asked of a CPU build)"},
        {"exit", "launch", exit_codes::launch,
         "launch error: MPI's world is not the launcher's (e.g. `srun --mpi=none`), bad launcher variables"},
        {"exit", "comm", exit_codes::comm, "communication (MPI) failure; a hung collective or a silent peer"},
        {"exit", "storage", exit_codes::storage,
         "storage: the run directory cannot be created or written, HDF5 I/O failed"},
        {"exit", "data", exit_codes::data, "data: dataset missing or malformed"},
        {"exit", "workload", exit_codes::workload,
         "workload: the training function failed (e.g. bad `init_weights`), or reported a NaN/infinite metric "
         "(`[failure] on_nonfinite = fail`)"},
        {"exit", "checkpoint", exit_codes::checkpoint,
         "checkpoint: a save failed on some rank (e.g. no space left), a restore failed (e.g. shapes do not match "
         "the model), or `trainrt checkpoints verify` found the newest checkpoint bad"},
        {"exit", "stopped", exit_codes::stopped,
         "stopped on request (signal or time limit): the stop checkpoint is committed; the job was requeued, or "
         "rerun it to resume"},
        {"exit", "failure_limit", exit_codes::failure_limit,
         "gave up: more failures than `[failure] max_failures` (final `failure` record in `events.jsonl`)"},
        {"exit", "requeue_needed", exit_codes::requeue_needed,
         "stopped, and the job needs a requeue trainrt could not do (no `scontrol` where it runs): the supervisor "
         "requeues it, or a site's `RequeueExit=75`"},
        {"exit", "interrupted", exit_codes::interrupted,
         "interrupted by Ctrl-C (SIGINT): stopped at the next step boundary with its checkpoint committed, not "
         "requeued and no failure counted; rerun to resume. A second Ctrl-C ends every rank at once"},
        {"results", "finished", results_codes::finished, "`trainrt results`: the run finished"},
        {"results", "running", results_codes::running,
         "`trainrt results`: the run is running (or was killed without a record)"},
        {"results", "stopped", results_codes::stopped, "`trainrt results`: the run stopped on request; rerun to resume"},
        {"results", "failed", results_codes::failed, "`trainrt results`: the run failed or gave up"},
    };
    return table;
}

}  // namespace trainrt
