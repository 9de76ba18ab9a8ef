#!/usr/bin/env bash
# A run directory on a network filesystem whose clients do not keep their caches coherent, across
# the local cluster's nodes, resumed on other nodes as a requeued job lands: a real GlusterFS
# volume with one FUSE client per node (node1..node3 each mount one on a common path inside its
# slurmd's mount namespace, so every task Slurm starts there reads and writes through it), each
# client trusting the attributes, names and negative lookups it cached for 60 s as an NFS client
# may (acregmax, acdirmax, lookupcache=all; GlusterFS's defaults: 1 s, 1 s, none), and one MPI-IO
# aggregator for the job (ROMIO hint cb_nodes 1, as a site's ROMIO hints may set), so node1's rank
# writes HDF5's metadata at each save for both nodes. A 2-task run (srun --mpi=pmix, one task
# per node), for each layout (`shared`, `file_per_rank`):
#   1. node1, node2: rank 1 killed when reporting iteration 4 (checkpoint 3 committed);
#   2. node2, node3: resumes from 3 (node2 caches the pages it wrote; node3 saw nothing), rank 1
#      killed at 7;
#   3. node1, node3: resumes from 6 (node1 caches files from attempt 1 that attempt 2 appended
#      to, within their attributes' 60 s) and completes.
# It ends with the weights of the same run uninterrupted on the local disk (mpiexec), no checkpoint
# skipped as bad; every checkpoint verifies through each node's client; result.jsonl reports the
# values of the same run uninterrupted on node1,node2 (each iteration once), and events.jsonl holds
# every attempt's start and restore, each line whole (each file appended by each attempt through
# another client).
# Part 2, as users submit a job: jobs/fashion_mlp.sbatch (trainrt supervise, --requeue), 2 nodes,
# requeued twice by `scontrol requeue` with a node drained each time, so that it starts again on
# node1+node2, node2+node3, node1+node3 (batch script and supervisor too, each reading the run
# through its node's client); it resumes from each stop's checkpoint and ends bitwise as the same
# training uninterrupted, every row once.
# With page_coherence.hpp trusting every filesystem (rank 0's early create of data.h5 kept), every
# checkpoint is committed with a checksum its file does not have (node2's rank hashed metadata
# that node1's aggregator wrote, from its own stale pages) and attempt 2 finds none to resume
# from; with ROMIO's default across nodes, one aggregator per node, that did not happen
# (2026-11-27). Without rank 0 creating data.h5 before ROMIO's collective open (shared_file.cpp),
# the first save fails: node2's client keeps the "no such file" of ROMIO's own lookup before it.
# ctest: resource=slurm_cluster
# ctest: resource=glusterfs
# ctest: fixture=small_data
# ctest: timeout=600
# ctest: processors=1
set -euo pipefail
# shellcheck source=tests/lib/slurm.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup
need_nodes 3
[[ $(id -u) == 0 ]] || fail "mounting GlusterFS needs root"
require_cmds nsenter
# shellcheck source=tools/glusterfs_volume.sh
source "$TRAINRT_SRC/tools/glusterfs_volume.sh"
cd "$TRAINRT_SRC"

VIEW=$TEST_TMP/view   # the run's storage path on every node: that node's client
NODES=(1 2 3)
slurmd_pid() { cat "$TRAINRT_SLURM_DIR/run/slurmd.node$1.launch.pid"; }
on_node() { local i=$1; shift; nsenter -t "$(slurmd_pid "$i")" -m "$@"; }  # CMD in node I's mounts
trap 'rc=$?; gluster_down; _on_exit $rc' EXIT

# Attributes, names and "no such file" answers cached 60 s, as an NFS client may (acregmax,
# acdirmax, lookupcache=all); GlusterFS's defaults are 1 s, 1 s and not cached.
NODE_MOUNT_OPTIONS=attribute-timeout=60,entry-timeout=60,negative-timeout=60
# This host reads the run through a client of its own (client_host), never written through.
gluster_up "trainrt_slurm_$$" "$TEST_TMP/gluster" "$TEST_TMP/client_host" || fail "GlusterFS volume not up"
mkdir -p "$VIEW"
for i in "${NODES[@]}"; do
  gluster_mount_in "$(slurmd_pid "$i")" "$VIEW" "$NODE_MOUNT_OPTIONS" || fail "cannot mount a client in node$i's mounts"
done
[[ $(stat -f -c %T "$VIEW") != fuse* ]] || fail "a node's client is mounted on this host's own $VIEW too"
log "GlusterFS volume trainrt_slurm_$$ ($(glusterfs --version | head -1)): node1..node3 each through its own client at $VIEW"

printf 'cb_nodes 1\n' >"$TEST_TMP/romio_hints"
export ROMIO_HINTS=$TEST_TMP/romio_hints   # srun passes the environment to the tasks
ARGS="--data.path=$SMALL_DATA --train.batch_size=64 --train.epochs=2 --checkpoint.every_steps=24 --metrics.progress=off"
reference_digest "$ARGS"   # either layout's weights: the layout does not change the training

# attempt LAYOUT RUN NODES: run RUN (layout LAYOUT) on those 2 nodes (one task each, rank 0 on the
# lower), its output into $TEST_TMP/RUN.N.out for the Nth attempt; sets rc, OUT.
attempt() {
  local n=1
  while [[ -e $TEST_TMP/$2.$n.out ]]; do n=$((n + 1)); done
  OUT=$TEST_TMP/$2.$n.out
  rc=0
  # shellcheck disable=SC2086
  timeout -k 10 300 bash slurm/local-cluster.sh exec 1 srun -p multi -w "$3" -N 2 --ntasks-per-node=1 --mpi=pmix \
    --time=5 "$TRAINRT" --config jobs/fashion_mlp.ini $ARGS --checkpoint.layout="$1" --run.storage_path="$VIEW/runs" \
    --run.name="$2" >"$OUT" 2>&1 || rc=$?
}
restored() { sed -n 's/^\[trainrt 0\] resuming from .* (iteration \([0-9][0-9]*\))$/\1/p' "$1" | tail -1; }

# Part 1 for one layout: uninterrupted on node1,node2 (run LAYOUT_whole), then killed twice and
# resumed on other node pairs (run LAYOUT).
killed_and_resumed() {
  local layout=$1 run=$TEST_TMP/client_host/runs/$1 out i
  local values='{_training_iteration, epoch, step, running_loss, loss, test_loss, test_accuracy}'
  attempt "$layout" "$layout"_whole node1,node2
  [[ $rc == 0 && $(digest_in "$OUT") == "$BASE" ]] || fail "$layout: uninterrupted run exited $rc, digest '$(digest_in "$OUT")', not $BASE"
  TRAINRT_FAULT=report:1:4 attempt "$layout" "$layout" node1,node2
  ((rc != 0)) || fail "$layout: attempt 1 (rank 1 killed at iteration 4) exited 0"
  TRAINRT_FAULT=report:1:7 attempt "$layout" "$layout" node2,node3
  [[ $rc != 0 && $(restored "$OUT") == 3 ]] || fail "$layout: attempt 2 exited $rc, resumed from '$(restored "$OUT")', not 3: $(tail -5 "$OUT")"
  attempt "$layout" "$layout" node1,node3
  [[ $rc == 0 && $(restored "$OUT") == 6 ]] || fail "$layout: attempt 3 exited $rc, resumed from '$(restored "$OUT")', not 6: $(tail -5 "$OUT")"
  [[ $(digest_in "$OUT") == "$BASE" ]] || fail "$layout: attempt 3 ends with digest '$(digest_in "$OUT")', the uninterrupted run $BASE"
  ! grep -qi 'skipping checkpoint\|warning.*checkpoint' "$TEST_TMP/$layout".[23].out \
    || fail "$layout: a checkpoint was reported bad: $(grep -hi 'checkpoint' "$TEST_TMP/$layout".[23].out | head -3)"
  for i in "${NODES[@]}"; do
    out=$TEST_TMP/$layout.verify$i.out
    on_node "$i" "$TRAINRT" checkpoints verify "$VIEW/runs/$layout" >"$out" 2>&1 || fail "$layout: verify through client $i: $(grep -v '^ok ' "$out" | head -3)"
    if (($(grep -c '^ok ' "$out") < 9)) || grep -q '^BAD' "$out"; then fail "$layout: verify through client $i: $(cat "$out")"; fi
  done
  [[ -s "$run/result.jsonl" && $(jq -c "$values" "$run/result.jsonl") == $(jq -c "$values" "$run"_whole/result.jsonl) ]] \
    || fail "$layout: result.jsonl of the resumed run does not report what the uninterrupted one did"
  jq -e . "$run/events.jsonl" >/dev/null || fail "$layout: events.jsonl holds a line that is not JSON"
  [[ $(jq -s -c '[.[] | select(.event == "start")] | length' "$run/events.jsonl") == 3 ]] \
    || fail "$layout: events.jsonl does not hold the 3 attempts' starts: $(jq -c 'select(.event == "start")' "$run/events.jsonl")"
  [[ $(jq -s -c '[.[] | select(.event == "restore") | .iteration]' "$run/events.jsonl") == "[3,6]" ]] \
    || fail "$layout: events.jsonl's restores are not 3 then 6: $(jq -c 'select(.event == "restore")' "$run/events.jsonl")"
  log "$layout: killed at 4 on node1,node2 and at 7 on node2,node3, resumed from 3 and 6, digest $BASE as uninterrupted;" \
    "every checkpoint verifies through each node's client; result.jsonl's values as uninterrupted; events.jsonl whole, 3 starts"
}
killed_and_resumed shared
killed_and_resumed file_per_rank

# Part 2, a job as users submit it: jobs/fashion_mlp.sbatch (trainrt supervise, --requeue) on 2
# nodes, requeued twice by `scontrol requeue`; each time a node the job ran on is drained, so that
# Slurm starts it again on the other pair (node1+node2, then node2+node3, then node1+node3), its
# batch script and supervisor included: they read the run directory through their node's client.
drained=""
drain() {
  [[ -z $drained ]] || scontrol update nodename="$drained" state=resume
  drained=$1
  scontrol update nodename="$drained" state=drain reason=slurm_glusterfs_nodes || fail "cannot drain $drained"
}
trap 'rc=$?; [[ -z $drained ]] || scontrol update nodename="$drained" state=resume; gluster_down; _on_exit $rc' EXIT
reference_digest "$LIFECYCLE_ARGS --checkpoint.layout=shared"
export TRAINRT TRAINRT_ARGS="$LIFECYCLE_ARGS --checkpoint.layout=shared --run.storage_path=$VIEW/runs --run.name=requeued"
RUN=$TEST_TMP/client_host/runs/requeued
OUT=$TEST_TMP/requeued.out
drain node3
submit -p multi -N 2 --ntasks-per-node=1 --ntasks=2 --output="$OUT" jobs/fashion_mlp.sbatch
for step in "0 node1" "1 node2"; do
  read -r restart leave <<<"$step"
  wait_start "$RUN" "$restart"
  wait_rows "$RUN" $(($(rows "$RUN") + 5))
  drain "$leave"
  timeout 20 scontrol requeue "$JOB" || fail "scontrol requeue $JOB failed"
  log "requeued job $JOB during restart $restart at row $(rows "$RUN"), $leave drained"
done
wait_job "$JOB" 300
expect_job_ok "$JOB"
hosts=$(jq -s -r '[.[] | select(.event == "start") | .hosts | join("+")] | join(" ")' "$RUN/events.jsonl")
[[ $hosts == "node1+node2 node2+node3 node1+node3" ]] || fail "the job's attempts ran on '$hosts'"
[[ $(jq -s -c '[.[] | select(.event == "restore")] | length' "$RUN/events.jsonl") == 2 ]] \
  || fail "expected 2 restores: $(jq -c 'select(.event == "restore")' "$RUN/events.jsonl")"
jq -e -s '[.[] | select(.event == "stop") | .checkpoint] == [.[] | select(.event == "restore") | .checkpoint | split("/") | last]' \
  "$RUN/events.jsonl" >/dev/null || fail "the restores did not use the stop checkpoints"
rows_once "$RUN"
[[ $(digest_in "$OUT") == "$BASE" ]] || fail "digest after two requeues $(digest_in "$OUT") != uninterrupted $BASE"
log "requeued twice onto other nodes (attempts on $hosts), resumed from each stop's checkpoint, digest $BASE, $(rows "$RUN") rows once"
