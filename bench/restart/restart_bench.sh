#!/usr/bin/env bash
# Restart benchmark (bench/README.md): for N ranks under mpiexec, REPS times:
#   1. a fresh fashion_mlp run; USR2 to its last rank once 3 rows are reported; measures the time
#      from the signal to the process exit (stop agreed, checkpoint committed, exit 9) and reads
#      the stop event's request_to_commit_s;
#   2. the same command again (it resumes): restart latency = process start to the first resumed
#      step, less the time spent verifying and reading the checkpoint (trainrt's own line);
#   3. baseline: time to the first step of a fresh start (no checkpoint) of the same job.
# Prints one JSON line per repetition on stdout.
# Usage: bench/restart/restart_bench.sh TRAINRT RANKS REPS STORAGE
set -euo pipefail
trainrt=$1 ranks=$2 reps=$3 storage=$4
args=(--config jobs/fashion_mlp.ini --train.epochs=3 --train.batch_size=256 --checkpoint.every_steps=50
      --run.storage_path="$storage")

rank_pid() {  # rank_pid NAME RANK
  local pid
  for pid in $(pgrep -x trainrt || true); do
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx -- "TRAINRT_BENCH_RUN=$1" || continue
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "PMI_RANK=$2" && { echo "$pid"; return 0; }
  done
  return 1
}

for rep in $(seq 1 "$reps"); do
  name=restart_n${ranks}_$rep
  out=$storage/$name
  TRAINRT_BENCH_RUN=$name mpiexec -n "$ranks" "$trainrt" "${args[@]}" --run.name="$name" >"$out.first" 2>&1 &
  runner=$!
  deadline=$((SECONDS + 120))
  until [[ -s $out/result.jsonl ]] && (($(wc -l <"$out/result.jsonl") >= 3)); do
    ((SECONDS < deadline)) || { echo "restart_bench: no 3 rows in 120 s" >&2; exit 1; }
    sleep 0.05
  done
  pid=$(rank_pid "$name" $((ranks - 1))) || { echo "restart_bench: rank not found" >&2; exit 1; }
  t0=$(date +%s.%N)
  kill -USR2 "$pid"
  rc=0; wait "$runner" || rc=$?
  t1=$(date +%s.%N)
  ((rc == 9)) || { echo "restart_bench: stopped run exited $rc, expected 9" >&2; tail "$out.first" >&2; exit 1; }
  commit=$(jq -r 'select(.event == "stop") | .request_to_commit_s' "$out/events.jsonl")
  fresh=$(sed -n 's/^\[trainrt 0\] first step \([0-9.]*\) s after process start (fresh start)$/\1/p' "$out.first")
  mpiexec -n "$ranks" "$trainrt" "${args[@]}" --run.name="$name" >"$out.resume" 2>&1 \
    || { echo "restart_bench: resume failed" >&2; tail "$out.resume" >&2; exit 1; }
  line=$(grep '^\[trainrt 0\] resumed: first step' "$out.resume" | tail -1)
  [[ -n "$line" && -n "$fresh" ]] || { echo "restart_bench: no timing lines" >&2; exit 1; }
  read -r first reading latency < <(sed -E 's/.*first step ([0-9.]+) s after process start, ([0-9.]+) s of it.*restart latency ([0-9.]+) s$/\1 \2 \3/' <<<"$line")
  printf '{"bench":"restart","ranks":%d,"rep":%d,"stop_to_exit_s":%.4f,"request_to_commit_s":%s,"first_resumed_step_s":%s,"checkpoint_read_s":%s,"restart_latency_s":%s,"fresh_first_step_s":%s}\n' \
    "$ranks" "$rep" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$commit" "$first" "$reading" "$latency" "$fresh"
done
