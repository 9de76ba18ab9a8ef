# shellcheck shell=bash
# Helpers for the lifecycle suite (stop requests, watchdog, failure budget) under mpiexec; the
# same scenarios on the real Slurm cluster are in tests/slurm/. Reuses the checkpoint suite's
# short fashion_mlp runs (train, digest_of, iterations_once, ...).
source "$(dirname "${BASH_SOURCE[0]}")/../checkpoint/lib.sh"

# rank_pid and wait_rows: tests/lib/common.sh.

# event RUN_DIR JQ_FILTER: events.jsonl objects selected by the filter, compact, one per line.
events() { jq -c "$2" "$1/events.jsonl"; }
