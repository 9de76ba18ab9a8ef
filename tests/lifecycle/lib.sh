# shellcheck shell=bash
# Helpers for the lifecycle suite (stop requests, watchdog, failure budget) under mpiexec; the
# same scenarios on the real Slurm cluster are in tests/slurm/. Reuses the checkpoint suite's
# short fashion_mlp runs (train, digest_of, iterations_once, ...).
source "$(dirname "${BASH_SOURCE[0]}")/../checkpoint/lib.sh"

# rank_pid NAME RANK: the pid of trainrt rank RANK of run NAME (mpiexec sets PMI_RANK); waits up
# to 30 s for it to appear.
rank_pid() {
  local name=$1 rank=$2 pid deadline=$((SECONDS + 30))
  while ((SECONDS < deadline)); do
    for pid in $(pgrep -f -- "--run.name=$name" || true); do
      [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = trainrt ] || continue
      tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "PMI_RANK=$rank" && { echo "$pid"; return 0; }
    done
    sleep 0.1
  done
  return 1
}

# wait_rows RUN_DIR N: waits (up to 60 s) until result.jsonl has at least N rows.
wait_rows() {
  local deadline=$((SECONDS + 60))
  until [ -s "$1/result.jsonl" ] && [ "$(wc -l <"$1/result.jsonl")" -ge "$2" ]; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

# event RUN_DIR JQ_FILTER: events.jsonl objects selected by the filter, compact, one per line.
events() { jq -c "$2" "$1/events.jsonl"; }
