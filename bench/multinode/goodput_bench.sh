#!/usr/bin/env bash
# Goodput of a compressed long job on the local 3-node cluster (issue 31): fashion_mlp on the full
# FashionMNIST set, 3 nodes x 2 tasks through jobs/fashion_mlp.sbatch (trainrt supervise, --no-kill,
# --requeue), about GOODPUT_MINUTES of training under a Slurm time limit of GOODPUT_LIMIT minutes,
# so that trainrt stops and requeues it several times, with one node killed (SIGKILL to its
# processes) and later one node frozen (SIGSTOP) while it trains; each faulty node is brought back
# once the relaunch runs without it. At the end it prints `trainrt results`' goodput breakdown and
# recoveries, and writes them as one JSON object.
#
#   bash bench/multinode/goodput_bench.sh [OUT.json]          # root; `make bench-goodput`
#
# Environment: GOODPUT_MINUTES (training wanted, 20), GOODPUT_LIMIT (--time in minutes, 4),
# GOODPUT_PEER_TIMEOUT (10), GOODPUT_PEER_LINKS (true: [failure] peer_links), GOODPUT_LEVELS
# ([checkpoint] levels, pfs; local,partner,pfs: node-local checkpoints in /dev/shm/%h with partner
# copies, the run directory every GOODPUT_PFS_EVERY-th, 10), BUILD (build). The
# epochs come from a calibration step on the same nodes (3 epochs). The faults hit a node other
# than the batch host, at 30 % and 65 % of the wanted training time. Starts the local cluster when it is not up, and stops it again then.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
OUT=${1:-bench/results/multinode/goodput.json}
MINUTES=${GOODPUT_MINUTES:-20}
LIMIT=${GOODPUT_LIMIT:-4}
PEER_TIMEOUT=${GOODPUT_PEER_TIMEOUT:-10}
PEER_LINKS=${GOODPUT_PEER_LINKS:-true}
LEVELS=${GOODPUT_LEVELS:-pfs}
PFS_EVERY=${GOODPUT_PFS_EVERY:-10}
BUILD=${BUILD:-build}
TRAINRT=$repo/$BUILD/trainrt
DATA=$repo/data/fashion-mnist.h5
CLUSTER=$repo/slurm/local-cluster.sh
say() { printf 'goodput_bench %s: %s\n' "$(date +%T)" "$*" >&2; }
die() { say "$*"; exit 1; }

[[ -x $TRAINRT ]] || die "no $TRAINRT: build first (make build, or BUILD=...)"
[[ -r $DATA ]] || die "no $DATA: make data"
# shellcheck source=bench/lib/local_cluster.sh
source "$repo/bench/lib/local_cluster.sh"
bench_cluster_up
WORK=$(mktemp -d /tmp/trainrt-goodput.XXXXXX)
JOB=""
cleanup() {
  [[ -z $JOB ]] || scancel "$JOB" 2>/dev/null || true
  for i in 1 2 3; do
    [[ "$(sinfo -h -N -n "node$i" -o %T 2>/dev/null)" =~ ^(idle|mixed|allocated)$ ]] && continue
    bash "$CLUSTER" node-kill "$i" >/dev/null 2>&1 || true
    bash "$CLUSTER" node-start "$i" >/dev/null 2>&1 || true
  done
  bench_cluster_down
  rm -rf /dev/shm/trainrt-goodput
}
trap cleanup EXIT
common="--data.path=$DATA --train.batch_size=240 --failure.peer_timeout=$PEER_TIMEOUT --failure.peer_links=$PEER_LINKS --failure.max_failures=5"
# The local cluster's nodes share one /dev/shm: a directory per hostname stands for each node's own.
levels="--checkpoint.levels=$LEVELS --checkpoint.local_dir=/dev/shm/trainrt-goodput/%h --checkpoint.pfs_every=$PFS_EVERY"

# Calibration: 3 epochs on the same 3 x 2 geometry; the fastest sets the epochs, with 10 % more
# (the first epochs run slower than the long job's: a first run of 2 gave 16 min for 20 wanted).
say "calibrating (3 epochs on 3 nodes x 2 tasks)"
# shellcheck disable=SC2086  # $common is a list of arguments
srun -p multi -N 3 --ntasks-per-node=2 --mpi=pmix --time=5 "$TRAINRT" --config jobs/fashion_mlp.ini $common \
  --train.epochs=3 --metrics.progress=off --run.storage_path="$WORK" --run.name=calibrate >"$WORK/calibrate.out" 2>&1 ||
  { tail -20 "$WORK/calibrate.out" >&2; die "the calibration run failed"; }
epoch_s=$(jq -s 'map(select(.epoch_time_s != null) | .epoch_time_s) | min' "$WORK/calibrate/result.jsonl")
epochs=$(awk -v e="$epoch_s" -v m="$MINUTES" 'BEGIN { n = int(1.1 * m * 60 / e) + 1; print (n < 4 ? 4 : n) }')
say "an epoch takes $epoch_s s: $epochs epochs for $MINUTES min of training"

RUN=$WORK/runs/long
export TRAINRT
export TRAINRT_ARGS="$common $levels --train.epochs=$epochs --metrics.progress_interval=60 --run.storage_path=$WORK/runs --run.name=long"
# --signal=USR2@15 replaces the template's @180, which a 4-minute limit would leave 1 minute of; trainrt's
# own margin (10 s + 2 x the slowest step and checkpoint) stops it in time either way.
JOB=$(sbatch --parsable -p multi -N 3 --ntasks-per-node=2 --ntasks=6 --time="$LIMIT" --signal=USR2@15 \
  --output="$WORK/long.out" jobs/fashion_mlp.sbatch)
say "job $JOB: $epochs epochs, --time=$LIMIT, output $WORK/long.out, run $RUN"

# trained_s: seconds of training the run's rows hold (their iterations' train time).
trained_s() { [[ -s $RUN/result.jsonl ]] && jq -s 'map(.train_time_s // 0) | add // 0' "$RUN/result.jsonl" || echo 0; }
relaunches() { [[ -s $RUN/events.jsonl ]] && jq -s 'map(select(.event == "relaunch")) | length' "$RUN/events.jsonl" || echo 0; }
job_state() { scontrol show job "$JOB" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }

# fault KIND: KIND (kill or freeze) a node of the running job that is not its batch host; waits
# for the relaunch without it, then brings the node back.
fault() {
  local kind=$1 batch node before deadline
  batch=$(scontrol show job "$JOB" | sed -n 's/.*BatchHost=\(node[0-9]\).*/\1/p')
  node=$(jq -s -r '[.[] | select(.event == "start")] | last | .hosts[]' "$RUN/events.jsonl" | grep -v -x "$batch" | tail -1)
  [[ $node =~ ^node([1-3])$ ]] || { say "no node to $kind (batch host $batch)"; return 1; }
  before=$(relaunches)
  say "$kind $node at $(trained_s) s trained"
  bash "$CLUSTER" "node-$kind" "${BASH_REMATCH[1]}" >&2
  rm -rf "/dev/shm/trainrt-goodput/$node"  # its memory is gone (killed) or out of reach (frozen)
  deadline=$((SECONDS + 300))
  until (($(relaunches) > before)) || ((SECONDS > deadline)); do sleep 2; done
  (($(relaunches) > before)) || say "no relaunch 300 s after the $kind of $node"
  sleep 5
  bash "$CLUSTER" node-kill "${BASH_REMATCH[1]}" >/dev/null 2>&1 || true
  bash "$CLUSTER" node-start "${BASH_REMATCH[1]}" >&2
}

want=$((MINUTES * 60))
killed=0 frozen=0 deadline=$((SECONDS + 6 * want + 1800))
while ((SECONDS < deadline)); do
  state=$(job_state)
  case "$state" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
  trained=$(trained_s)
  if [[ $state == RUNNING ]] && [[ "$(tail -c 4000 "$RUN/events.jsonl" 2>/dev/null | tail -1 | jq -r .event 2>/dev/null)" =~ ^(restore|checkpoint|start)$ ]]; then
    if ((!killed)) && awk -v t="$trained" -v w="$want" 'BEGIN { exit !(t >= 0.30 * w) }'; then
      fault kill && killed=1
    elif ((killed && !frozen)) && awk -v t="$trained" -v w="$want" 'BEGIN { exit !(t >= 0.65 * w) }'; then
      fault freeze && frozen=1
    fi
  fi
  sleep 5
done
state=$(job_state)
say "job $JOB ended $state"
[[ $state == COMPLETED ]] || { tail -30 "$WORK/long.out" >&2; die "the job did not complete ($state)"; }
JOB=""

"$TRAINRT" results "$RUN" | sed -n '/^status:/p;/^restarts:/,$p' >&2
"$TRAINRT" results --json "$RUN" >"$WORK/results.json"
mkdir -p "$(dirname "$OUT")"
requeues=$(jq -s 'map(select(.event == "requeue")) | length' "$RUN/events.jsonl")
jq --argjson minutes "$MINUTES" --argjson requeues "$requeues" --argjson limit "$LIMIT" --argjson epochs "$epochs" \
  --argjson killed "$killed" --argjson frozen "$frozen" --argjson peer "$PEER_TIMEOUT" --argjson links "$PEER_LINKS" --arg run "$RUN" \
  --arg levels "$LEVELS" \
  --arg when "$(date -u +%FT%TZ)" --argjson trained "$(trained_s)" \
  '{bench: "goodput", when: $when, minutes_wanted: $minutes, time_limit_min: $limit, epochs: $epochs,
    trained_s: $trained, node_killed: ($killed == 1), node_frozen: ($frozen == 1), peer_timeout_s: $peer,
    peer_links: $links, checkpoint_levels: $levels, requeues: $requeues,
    goodput: .goodput, recoveries: .recoveries, run: $run}' "$WORK/results.json" >"$OUT"
jq -r '"goodput \(.goodput.ratio * 1000 | round / 10) % of \(.goodput.allocated_rank_s | round) rank-s; \(.requeues) requeues; trained \(.trained_s | round) s; " +
  "lost (rank-s): " + (.goodput.lost_rank_s | to_entries | map("\(.key) \(.value | round)") | join(", ")) +
  "; target >= 90 %: " + (if .goodput.ratio >= 0.9 then "PASS" else "MISS" end)' "$OUT"
say "results in $OUT (run directory $RUN kept)"
