#!/usr/bin/env bash
# The local cluster is up and is what the other tests assume: one node "head" declaring
# CPUs=8, 4-task steps, batch jobs, and a requeue that comes back within seconds; and the
# namespaced nodes node1..node3 (partition multi) running a batch step across them.
# ctest: resource=slurm_cluster
# ctest: processors=1
set -euo pipefail
# shellcheck source=tests/lib/slurm.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup

# --- the script's own view -------------------------------------------------------------------
run_ok 30 "$TEST_TMP/status.txt" bash "$TRAINRT_SRC/slurm/local-cluster.sh" status
grep -q '^cluster: up' "$TEST_TMP/status.txt" || fail "local-cluster.sh status: $(cat "$TEST_TMP/status.txt")"

# --- the node as declared --------------------------------------------------------------------
node=$(scontrol show node -o head)
cpus=$(tr ' ' '\n' <<<"$node" | sed -n 's/^CPUTot=//p')
addr=$(tr ' ' '\n' <<<"$node" | sed -n 's/^NodeAddr=//p')
[[ "$cpus" == 8 ]] || fail "node head declares CPUTot=$cpus, expected 8: $node"
[[ "$addr" == 127.0.0.1 ]] || fail "node head has NodeAddr=$addr, expected 127.0.0.1"
[[ "$(sinfo -h -o %D -p debug)" == 1 ]] || fail "partition debug does not have exactly one node"
log "node head: CPUTot=$cpus NodeAddr=$addr"

# --- a 4-task step -----------------------------------------------------------------------------
run_ok 60 "$TEST_TMP/hostname.txt" srun -n 4 --time=1 hostname
lines=$(wc -l <"$TEST_TMP/hostname.txt")
[[ "$lines" == 4 ]] || fail "srun -n 4 hostname printed $lines lines: $(cat "$TEST_TMP/hostname.txt")"
[[ $(sort -u "$TEST_TMP/hostname.txt" | wc -l) == 1 ]] || fail "srun -n 4 hostname: more than one host"

# shellcheck disable=SC2016
run_ok 60 "$TEST_TMP/procid.txt" srun -n 4 --time=1 bash -c 'echo "$SLURM_PROCID $SLURM_NTASKS $SLURM_LOCALID"'
expected=$'0 4 0\n1 4 1\n2 4 2\n3 4 3'
[[ "$(sort -n "$TEST_TMP/procid.txt")" == "$expected" ]] \
  || fail "srun -n 4: SLURM_PROCID/NTASKS/LOCALID were: $(tr '\n' ';' <"$TEST_TMP/procid.txt")"

for mpi in pmix pmi2; do
  srun --mpi=list 2>&1 | grep -qw "$mpi" || fail "srun --mpi=list lacks $mpi: $(srun --mpi=list 2>&1 | tr '\n' ' ')"
done

# --- a batch job with a step, requeued while it sleeps -------------------------------------------
cat >"$TEST_TMP/requeue.sbatch" <<'EOF'
#!/bin/bash
#SBATCH --ntasks=4 --time=5 --requeue --open-mode=append
echo "run restart_count=${SLURM_RESTART_COUNT:-0}"
srun -n 4 hostname | sed 's/^/task /'
echo "step done"
if [[ "${SLURM_RESTART_COUNT:-0}" == 0 ]]; then sleep 300; fi
echo "finished"
EOF
out=$TEST_TMP/requeue-%j.out
submit --output="$out" "$TEST_TMP/requeue.sbatch"
out=${out//%j/$JOB}
wait_for_line "$out" '^step done' 60
[[ $(grep -c '^task ' "$out") == 4 ]] || fail "the batch step did not print 4 task lines"
t0=$(date +%s.%N)
scontrol requeue "$JOB" || fail "scontrol requeue $JOB failed"
wait_for_line "$out" '^run restart_count=1' 60
turnaround=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
log "requeue -> running again in ${turnaround}s"
awk -v t="$turnaround" 'BEGIN{exit !(t < 30)}' \
  || fail "requeue took ${turnaround}s to restart (cred_expire/sched_interval not short?)"
wait_job "$JOB" 120
expect_job_ok "$JOB"
[[ "$(job_field "$JOB" Restarts)" == 1 ]] || fail "job $JOB Restarts=$(job_field "$JOB" Restarts), expected 1"
grep -q '^run restart_count=0' "$out" || fail "--open-mode=append lost the first run's output"
grep -q '^finished' "$out" || fail "the requeued run did not finish"

# --- the namespaced nodes (partition multi): hostnames, node ids, a batch step across them ---------
[[ "$(sinfo -h -p multi -o %D)" == "${TRAINRT_SLURM_NODES:-0}" && ${TRAINRT_SLURM_NODES:-0} -ge 3 ]] \
  || fail "partition multi has $(sinfo -h -p multi -o %D) nodes; TRAINRT_SLURM_NODES=${TRAINRT_SLURM_NODES:-unset}, 3 expected"
cat >"$TEST_TMP/multi.sbatch" <<'SB'
#!/bin/bash
#SBATCH -p multi -N 3 --ntasks-per-node=1 --time=2
echo "batch host $(hostname)"
srun bash -c 'echo "task $SLURM_PROCID $SLURM_NODEID $(hostname)"'
SB
out=$TEST_TMP/multi-%j.out
submit --output="$out" "$TEST_TMP/multi.sbatch"
out=${out//%j/$JOB}
wait_job "$JOB" 60
expect_job_ok "$JOB"
grep -qx 'batch host node1' "$out" || fail "the multi-node batch script did not run on node1: $(cat "$out")"
[[ "$(grep '^task ' "$out" | sort)" == $'task 0 0 node1\ntask 1 1 node2\ntask 2 2 node3' ]] \
  || fail "tasks across the namespaced nodes: $(grep '^task ' "$out" | tr '\n' ';')"
log "partition multi: 3 nodes, a batch step ran on node1..node3 with node ids 0..2"
