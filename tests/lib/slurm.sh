# Shared helpers for tests/slurm/test_*.sh (source it; bash only).
# shellcheck shell=bash disable=SC2034
#
# The tests run against the real local cluster that slurm/local-cluster.sh starts (ctest's
# slurm_cluster fixture does). They never skip: no Slurm, no cluster, no binary = a loud failure.
#
# Environment (set by ctest, defaults for running a test by hand from the repository root):
#   TRAINRT_SRC    source dir (default: two levels above this file)
#   TRAINRT_BUILD  build dir (default: $TRAINRT_SRC/build)
#   TRAINRT        trainrt binary (default: $TRAINRT_BUILD/trainrt)
#   TRAINRT_SLURM_DIR  the cluster's state dir (default /tmp/trainrt-slurm)
#   TRAINRT_TEST_KEEP=1  keep the test's temporary directory even when it passes

set -euo pipefail

TRAINRT_SRC=${TRAINRT_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
TRAINRT_BUILD=${TRAINRT_BUILD:-$TRAINRT_SRC/build}
TRAINRT=${TRAINRT:-$TRAINRT_BUILD/trainrt}
TRAINRT_SLURM_DIR=${TRAINRT_SLURM_DIR:-/tmp/trainrt-slurm}
export TRAINRT_SRC TRAINRT_BUILD TRAINRT TRAINRT_SLURM_DIR
# The helpers every suite shares (rows, rows_reached, rank_pid, require_data, $WORK); this suite
# fails fast (fail below) and owns $WORK's clean-up (slurm_setup's exit trap).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

TEST_NAME=$(basename "${BASH_SOURCE[1]:-$0}" .sh)
TEST_TMP=""
TEST_JOBS=()          # jobs this test submitted: diagnosed on failure, cancelled on exit

log() { echo "[$TEST_NAME $(date +%T)] $*"; }

# Fails the test now, with the diagnostics of every job it submitted.
fail() {
  echo "FAIL [$TEST_NAME]: $*" >&2
  exit 1
}

# --- set-up and tear-down ----------------------------------------------------------------------

_on_exit() {
  local rc=$1 job
  if ((rc != 0)); then
    for job in "${TEST_JOBS[@]}"; do job_diagnostics "$job" >&2 || true; done
    slurm_log_tails >&2 || true
  fi
  for job in "${TEST_JOBS[@]}"; do
    if [[ -n "$(squeue -h -j "$job" -o %A 2>/dev/null || true)" ]]; then
      scancel "$job" 2>/dev/null || true
    fi
  done
  if [[ -n "$TEST_TMP" && -d "$TEST_TMP" ]]; then
    if ((rc == 0)) && [[ "${TRAINRT_TEST_KEEP:-0}" != 1 ]]; then
      rm -rf "$TEST_TMP"
    else
      echo "[$TEST_NAME] kept $TEST_TMP" >&2
    fi
  fi
  if ((rc == 0)); then echo "PASS [$TEST_NAME]"; else echo "FAIL [$TEST_NAME] (exit $rc)" >&2; fi
}

require_cmds() {
  local c missing=()
  for c in "$@"; do command -v "$c" >/dev/null 2>&1 || missing+=("$c"); done
  ((${#missing[@]} == 0)) || fail "missing commands: ${missing[*]} (bash tools/deps.sh installs them)"
}

# Loads the cluster's environment and checks that it is up. Call first in every test.
slurm_setup() {
  trap '_on_exit $?' EXIT
  require_cmds sbatch srun salloc squeue scontrol scancel sinfo jq timeout
  local env_sh=$TRAINRT_SLURM_DIR/env.sh
  [[ -r "$env_sh" ]] || fail "$env_sh not found: the local cluster is not up (bash slurm/local-cluster.sh start)"
  # shellcheck disable=SC1090
  source "$env_sh"
  [[ -r "${SLURM_CONF:-}" ]] || fail "SLURM_CONF='${SLURM_CONF:-}' from $env_sh is not readable"
  timeout 20 scontrol ping 2>&1 | grep -q 'is UP' || fail "slurmctld does not answer (scontrol ping: $(timeout 20 scontrol ping 2>&1 | tr '\n' ' '))"
  local state
  state=$(timeout 20 sinfo -h -n head -o %T 2>&1 | head -n1)
  case "$state" in
    idle|mixed|allocated|completing) ;;
    *) fail "node head is '$state', not usable" ;;
  esac
  TEST_TMP=$WORK  # slurmd's tasks write there too
  chmod 0755 "$TEST_TMP"
  log "cluster up (node $state), SLURM_CONF=$SLURM_CONF, tmp $TEST_TMP"
}

# --- jobs --------------------------------------------------------------------------------------

# sbatch --parsable ARGS...; sets JOB to the job id and remembers it for diagnostics.
# (Not meant for $(...): it must fail the test itself and record the job in this shell.)
JOB=""
submit() {
  local out
  out=$(sbatch --parsable "$@" 2>&1) || fail "sbatch $* failed: $out"
  out=${out%%;*}
  [[ "$out" =~ ^[0-9]+$ ]] || fail "sbatch $* printed '$out', not a job id"
  TEST_JOBS+=("$out")
  JOB=$out
  log "submitted job $JOB: sbatch $*"
}

# A field of `scontrol show job` (e.g. JobState, ExitCode, StdOut, Restarts); empty when unknown.
job_field() {
  local job=$1 key=$2
  timeout 20 scontrol show job -o "$job" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$key=//p" | head -n1
}

# True for states a job does not leave by itself.
is_final_state() {
  case "$1" in
    COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|PREEMPTED|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE) return 0 ;;
    *) return 1 ;;
  esac
}

# Waits until JOB reaches a final state and sets JOB_STATE to it; fails the test after LIMIT
# seconds (the job is then cancelled on exit).
JOB_STATE=""
wait_job() {
  local job=$1 limit=${2:-300} deadline state="" t0=$SECONDS
  deadline=$((SECONDS + limit))
  while ((SECONDS < deadline)); do
    state=$(job_field "$job" JobState)
    [[ -n "$state" ]] || fail "job $job is unknown to slurmctld (scontrol show job $job)"
    if is_final_state "$state"; then
      JOB_STATE=$state
      log "job $job ended $state after ~$((SECONDS - t0))s"
      return 0
    fi
    sleep 0.5
  done
  fail "job $job still $state after ${limit}s"
}

# Waits until `test -s FILE && grep -q PATTERN FILE`, up to TIMEOUT seconds.
wait_for_line() {
  local file=$1 pattern=$2 limit=${3:-60} deadline
  deadline=$((SECONDS + limit))
  until [[ -s "$file" ]] && grep -qE -- "$pattern" "$file"; do
    ((SECONDS < deadline)) || fail "no line matching '$pattern' in $file after ${limit}s"
    sleep 0.1
  done
}

# Asserts the job ended COMPLETED with exit code 0:0.
expect_job_ok() {
  local job=$1 state exit_code
  state=$(job_field "$job" JobState)
  exit_code=$(job_field "$job" ExitCode)
  [[ "$state" == COMPLETED ]] || fail "job $job ended $state (ExitCode=$exit_code), not COMPLETED"
  [[ "$exit_code" == 0:0 ]] || fail "job $job ExitCode=$exit_code, not 0:0"
}

job_diagnostics() {
  local job=$1 out
  echo "===== job $job: scontrol show job"
  timeout 20 scontrol show job "$job" 2>&1 || true
  out=$(job_field "$job" StdOut)
  if [[ -n "$out" && -r "$out" ]]; then
    echo "===== job $job: output $out (last 80 lines)"
    tail -n 80 "$out"
  fi
}

slurm_log_tails() {
  local f
  for f in "$TRAINRT_SLURM_DIR/log/slurmctld.log" "$TRAINRT_SLURM_DIR/log/slurmd.log"; do
    [[ -r "$f" ]] || continue
    echo "===== tail of $f"
    tail -n 30 "$f"
  done
}

# Runs a command with a time limit; fails the test (showing its output) when it fails.
# Usage: run_ok SECONDS OUTFILE CMD...   (stdout and stderr go to OUTFILE)
run_ok() {
  local limit=$1 out=$2 rc=0
  shift 2
  timeout -k 5 "$limit" "$@" >"$out" 2>&1 || rc=$?
  # srun's own notices while the nodes of the previous job are still completing: not the command's output
  sed -i -E '/^srun: job [0-9]+ (queued and waiting for resources|has been allocated resources)$/d' "$out"
  if ((rc != 0)); then
    echo "===== output of: $*" >&2
    cat "$out" >&2
    ((rc == 124)) && fail "timed out after ${limit}s: $*"
    fail "exit status $rc: $*"
  fi
}

# --- lifecycle scenarios (requeue, stop signals, time limit, crashes) ----------------------------

# Short fashion_mlp arguments shared by the lifecycle tests: 6 epochs of batch 256 with a
# checkpoint every 50 steps (5 result rows per epoch, 30 in all; ~10 s of training on 2 ranks).
LIFECYCLE_ARGS="--train.epochs=6 --train.batch_size=256 --checkpoint.every_steps=50"

# submit_fashion NAME SBATCH_FILE "TRAINRT_ARGS" [SBATCH_OPTIONS...]: submits the job from the
# source dir with 2 tasks, run directory $TEST_TMP/runs/NAME; sets JOB, OUT (its output file)
# and RUN (its run directory). The job inherits TRAINRT and anything else exported by the caller.
submit_fashion() {
  local name=$1 file=$2 args=$3
  shift 3
  OUT=$TEST_TMP/$name.out
  RUN=$TEST_TMP/runs/$name
  export TRAINRT
  export TRAINRT_ARGS="$args --run.storage_path=$TEST_TMP/runs --run.name=$name"
  local here=$PWD
  cd "$TRAINRT_SRC"
  submit --ntasks=2 --output="$OUT" "$@" "$file"
  cd "$here"
}

# submit_template NAME "TRAINRT_ARGS": like submit_fashion, through the generic template
# slurm/trainrt.sbatch with jobs/fashion_mlp.ini and the arguments as the script's arguments.
submit_template() {
  local name=$1 here=$PWD
  OUT=$TEST_TMP/$name.out
  RUN=$TEST_TMP/runs/$name
  export TRAINRT
  cd "$TRAINRT_SRC"
  # shellcheck disable=SC2086
  submit --ntasks=2 --output="$OUT" slurm/trainrt.sbatch jobs/fashion_mlp.ini $2 \
    --run.storage_path="$TEST_TMP/runs" --run.name="$name"
  cd "$here"
}

# reference_digest "TRAINRT_ARGS": sets BASE to the weights digest of the same training,
# uninterrupted, under mpiexec -n 2 (the launchers agree bitwise: test_digest_launchers).
# Computed once per build and arguments and kept in $TRAINRT_BUILD/test-cache (keyed by the
# arguments and the binaries' modification times): the lifecycle tests share one reference.
BASE=""
reference_digest() {
  local key cache out=$TEST_TMP/reference.out here=$PWD
  key=$(echo "$1 $(stat -c %Y "$TRAINRT" "$TRAINRT_BUILD"/lib/libtrainrt.so.*.*.*)" | md5sum | cut -c1-12)
  cache=${TRAINRT_BUILD:?}/test-cache/reference-$key.digest
  if [[ -s "$cache" ]]; then
    BASE=$(cat "$cache")
    log "uninterrupted reference (computed earlier by this build): $BASE"
    return
  fi
  cd "$TRAINRT_SRC"
  # shellcheck disable=SC2086
  run_ok 300 "$out" mpiexec -n 2 "$TRAINRT" --config jobs/fashion_mlp.ini $1 \
     --run.storage_path="$TEST_TMP/runs" --run.name="reference-$key"  # one run per set of arguments
  cd "$here"
  BASE=$(sed -n 's/^weights_digest=//p' "$out" | tail -1)
  [[ "$BASE" =~ ^[0-9a-f]{16}$ ]] || fail "no weights digest from the reference run ($out)"
  mkdir -p "$(dirname "$cache")" && echo "$BASE" >"$cache.$$" && mv "$cache.$$" "$cache"
  log "uninterrupted reference: $BASE"
}

# start_fashion NAME ROWS ["EXTRA_ARGS"]: submits the lifecycle job and waits for its first run
# to report ROWS rows.
start_fashion() {
  submit_fashion "$1" jobs/fashion_mlp.sbatch "$LIFECYCLE_ARGS ${3:-}"
  wait_start "$RUN" 0
  wait_rows "$RUN" "$2"
}

# task_pid JOB RANK: pid of the trainrt process of JOB with SLURM_PROCID=RANK (waits up to 60 s).
task_pid() {
  local job=$1 rank=$2 pid deadline=$((SECONDS + 60))
  while ((SECONDS < deadline)); do
    for pid in $(pgrep -x trainrt || true); do
      tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "SLURM_JOB_ID=$job" || continue
      tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "SLURM_PROCID=$rank" && { echo "$pid"; return 0; }
    done
    sleep 0.1
  done
  fail "no trainrt task $rank of job $job within 60 s"
}

# need_nodes N: the local cluster has at least N namespaced nodes (partition multi), or the test fails.
need_nodes() {
  [[ ${TRAINRT_SLURM_NODES:-0} -ge $1 ]] ||
    fail "the local cluster has ${TRAINRT_SLURM_NODES:-0} namespaced nodes; this test needs $1 (TRAINRT_SLURM_NODES)"
}

# cluster_slurmd_timeout: the cluster's SlurmdTimeout in seconds.
cluster_slurmd_timeout() { scontrol show config | sed -n 's/^SlurmdTimeout *= *\([0-9]*\).*/\1/p'; }

# cluster_kill_wait: the cluster's KillWait in seconds (SIGTERM to SIGKILL when a step is ended).
cluster_kill_wait() { scontrol show config | sed -n 's/^KillWait *= *\([0-9]*\).*/\1/p'; }

# wait_rows RUN N [LIMIT]: until there are at least N result rows (common.sh's rows_reached);
# fails the test after LIMIT (120) seconds.
wait_rows() {
  rows_reached "$1" "$2" "${3:-120}" || fail "$1/result.jsonl has $(rows "$1") rows after ${3:-120}s, waited for $2"
}

# wait_start RUN RESTART: until events.jsonl has a start event with that restart count.
wait_start() {
  local deadline=$((SECONDS + 120))
  until [[ -s "$1/events.jsonl" ]] && jq -s -e --argjson r "$2" 'any(.[]; .event == "start" and .restart_count == $r)' \
      "$1/events.jsonl" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "no start event with restart_count $2 in $1/events.jsonl after 120s"
    sleep 0.2
  done
}

# wait_checkpoint RUN ITERATION: until events.jsonl records a committed checkpoint of at least that
# iteration (a result row is written before its checkpoint: a fault right after the row may land
# before the commit); fails after 120 s.
wait_checkpoint() {
  local deadline=$((SECONDS + 120))
  until jq -s -e --argjson i "$2" 'any(.[]; .event == "checkpoint" and .iteration >= $i)' \
      "$1/events.jsonl" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "no checkpoint of iteration $2 or later in $1/events.jsonl after 120s"
    sleep 0.1
  done
}

# restored_at_least RUN ITERATION: the last restore event restored that iteration or a later one.
restored_at_least() {
  local restored
  restored=$(jq -s -r 'map(select(.event == "restore")) | last | .iteration // 0' "$1/events.jsonl")
  ((restored >= $2)) || fail "the relaunch restored iteration $restored, not the checkpoint of iteration $2 or later committed before the fault"
}

# wait_relaunch RUN WHAT: until events.jsonl has a second start (the relaunch after WHAT, e.g. "the
# kill"); fails after 180 s. Sets T_AGAIN (date +%s.%N) to when it was seen.
wait_relaunch() {
  local deadline=$((SECONDS + 180))
  until jq -s -e 'map(select(.event == "start")) | length >= 2' "$1/events.jsonl" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "no relaunch within 180 s of $2: $(tail -5 "$1/events.jsonl")"
    sleep 0.2
  done
  T_AGAIN=$(date +%s.%N)
}

# rows_once RUN: result.jsonl holds iterations 1..last, each exactly once, in order.
rows_once() {
  local got want
  got=$(jq -r '._training_iteration' "$1/result.jsonl" | tr '\n' ' ')
  want=$(seq 1 "$(jq -r '._training_iteration' "$1/result.jsonl" | tail -1)" | tr '\n' ' ')
  [[ "$got" == "$want" ]] || fail "$1/result.jsonl iterations are '$got', expected '$want'"
}

digest_in() { sed -n 's/^weights_digest=//p' "$1" | tail -1; }
