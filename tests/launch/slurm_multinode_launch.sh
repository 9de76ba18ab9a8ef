#!/usr/bin/env bash
# Launches across the local cluster's namespaced nodes (partition multi, node1..node3), as on a real
# multi-node cluster:
#  - launch_probe under srun --mpi=pmix and --mpi=pmi2, 2 nodes x 2 tasks and 3 x 1: the launcher's
#    view, MPI's world and MPI's own node-local communicator (built from the node map trainrt's
#    PMI-1 server gives MPICH) agree, tasks are placed in blocks per node, and nothing at all is
#    printed on stderr (multi-node PMIx launches used to print two error lines per rank); srun runs
#    with --quiet, which drops its own notices ("job N queued and waiting for resources" while the
#    previous step's nodes are still completing) and keeps its errors;
#  - fashion_mlp gives the same weights digest across nodes as mpiexec with the same world on one
#    node (2x2 under pmix and pmi2, 3x1 under pmix; batch 60 so that 3 ranks divide it).
# ctest: resource=slurm_cluster
# ctest: fixture=small_data
# ctest: processors=1
set -euo pipefail
# shellcheck source=tests/lib/slurm.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup
cd "$TRAINRT_SRC"
need_nodes 3
[[ -r data/fashion-mnist.h5 ]] || fail "missing data/fashion-mnist.h5 (make data builds it)"
PROBE=$TRAINRT_BUILD/launch_probe
[[ -x "$PROBE" ]] || fail "$PROBE not built"

# srun from node1, as a batch script there would: the nodes reach only addresses on the test bridge.
NODE1=(bash "$TRAINRT_SRC/slurm/local-cluster.sh" exec 1)

# probe MPI NODES TASKS_PER_NODE
probe() {
  local mpi=$1 nodes=$2 per=$3 name="probe-$1-$2x$3" n=$(($2 * $3)) bad
  timeout 120 "${NODE1[@]}" srun --quiet -p multi -N "$nodes" --ntasks-per-node="$per" --mpi="$mpi" --time=2 "$PROBE" \
    >"$TEST_TMP/$name.jsonl" 2>"$TEST_TMP/$name.err" || fail "$name: srun exited $? ($(cat "$TEST_TMP/$name.err"))"
  [[ ! -s "$TEST_TMP/$name.err" ]] || fail "$name: printed on stderr:
$(cat "$TEST_TMP/$name.err")"
  [[ $(jq -s length "$TEST_TMP/$name.jsonl") == "$n" ]] || fail "$name: expected $n lines: $(cat "$TEST_TMP/$name.jsonl")"
  bad=$(jq -c --argjson n "$n" --argjson per "$per" '
      select(.launcher_size != $n or .mpi_size != $n or .mpi_rank != .launcher_rank
             or .local_size != $per or .mpi_local_size != $per or .mpi_local_rank != .local_rank
             or .local_rank != (.launcher_rank % $per) or .host != "node\(1 + (.launcher_rank / $per | floor))")' \
      "$TEST_TMP/$name.jsonl")
  [[ -z "$bad" ]] || fail "$name: ranks whose views disagree (want $per per node in blocks, node1 first):
$bad"
  log "$name: $n ranks on $nodes nodes agree, stderr empty"
}
probe pmix 2 2
probe pmi2 2 2
probe pmix 3 1
probe pmi2 3 1

args=(--config jobs/fashion_mlp.ini --data.path="$SMALL_DATA" --train.epochs=1 --train.batch_size=60 --run.seed=5 --metrics.progress=off
      --run.storage_path="$TEST_TMP")
# train NAME WORLD COMMAND...: one epoch; the digest line into $TEST_TMP/NAME.digest.
train() {
  local name=$1 world=$2; shift 2
  timeout 600 "$@" "$TRAINRT" "${args[@]}" --run.name="$name" >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" \
    || fail "$name: exited $? ($(tail -3 "$TEST_TMP/$name.err" | tr '\n' ' '))"
  grep -E '^weights_digest=[0-9a-f]{16}$' "$TEST_TMP/$name.out" >"$TEST_TMP/$name.digest" \
    || fail "$name printed no weights_digest line"
  jq -se --argjson w "$world" 'length == 1 and .[0].world_size == $w' "$TEST_TMP/$name/result.jsonl" >/dev/null \
    || fail "$name: result.jsonl is not one row with world_size $world"
  if grep -v '^\[trainrt [0-9]*\] ' "$TEST_TMP/$name.err" | grep -q .; then
    fail "$name: unexpected lines on stderr: $(grep -v '^\[trainrt [0-9]*\] ' "$TEST_TMP/$name.err" | head -5)"
  fi
  log "$name: $(cat "$TEST_TMP/$name.digest")"
}
same_digest() {
  cmp -s "$TEST_TMP/$1.digest" "$TEST_TMP/$2.digest" ||
    fail "digests differ: $1 $(cat "$TEST_TMP/$1.digest"), $2 $(cat "$TEST_TMP/$2.digest")"
}
train one-node-4 4 mpiexec -n 4
train pmix-2x2 4 "${NODE1[@]}" srun --quiet -p multi -N 2 --ntasks-per-node=2 --mpi=pmix --time=5
train pmi2-2x2 4 "${NODE1[@]}" srun --quiet -p multi -N 2 --ntasks-per-node=2 --mpi=pmi2 --time=5
same_digest one-node-4 pmix-2x2
same_digest one-node-4 pmi2-2x2
hosts=$(jq -r 'select(.event == "start") | .hosts | join(",")' "$TEST_TMP/pmix-2x2/events.jsonl")
[[ "$hosts" == node1,node2 ]] || fail "pmix-2x2: start event hosts '$hosts', expected node1,node2"
train one-node-3 3 mpiexec -n 3
train pmix-3x1 3 "${NODE1[@]}" srun --quiet -p multi -N 3 --ntasks-per-node=1 --mpi=pmix --time=5
same_digest one-node-3 pmix-3x1
log "across nodes = on one node: 4 ranks $(cat "$TEST_TMP/pmix-2x2.digest"), 3 ranks $(cat "$TEST_TMP/pmix-3x1.digest")"
