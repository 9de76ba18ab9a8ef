#!/usr/bin/env bash
# Kill -> training again: a node of a 3-node job fails, how long until trainrt trains again on the
# nodes left, against Slurm's own reaction time (SlurmdTimeout) on the same cluster, and how many
# steps each failure costs. Each repetition is one run of tests/supervise/slurm_node_failure.sh
# (3 nodes x 2 tasks, sbatch --no-kill through trainrt supervise, a checkpoint every 5 steps,
# [failure] peer_timeout = 10 s) with every process of node2 frozen (SIGSTOP: a hung node, which
# only trainrt's heartbeats detect) or killed (SIGKILL: its processes gone, which its peer links
# tell its neighbours at once), and one run of tests/supervise/slurm_batch_host.sh per
# repetition: the batch host killed, the supervisor's watcher step on another node takes the job
# over.
#
#   bash bench/multinode/node_failure_bench.sh OUT.jsonl [REPEAT]     # root; the local cluster
#
# Starts the local cluster (slurm/local-cluster.sh) when it is not up, and stops it again then.
# One JSON line per repetition:
#   {"bench":"node_failure","fault":"freeze","again_s":42.4,"slurmd_timeout_s":300,
#    "peer_timeout_s":10,"steps_lost":3.2,"every_steps":5,"slurm_state":"mixed*"}
# steps_lost: the steps the failed attempt had made past the checkpoint the relaunch restored,
# estimated from the step rate between the last two result rows before the fault.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
OUT=${1:?usage: node_failure_bench.sh OUT.jsonl [REPEAT]}
REPEAT=${2:-3}
BUILD=${BUILD:-build}
source "$repo/bench/lib/machine.sh"
PY=$(build_python "$repo/$BUILD")
say() { printf 'node_failure_bench: %s\n' "$*" >&2; }

# shellcheck source=bench/lib/local_cluster.sh
source "$repo/bench/lib/local_cluster.sh"
bench_cluster_up
trap bench_cluster_down EXIT

export TRAINRT=$repo/$BUILD/trainrt TRAINRT_BUILD=$repo/$BUILD TRAINRT_SRC=$repo TRAINRT_TEST_KEEP=1
: >"$OUT"
for fault in freeze kill batchhost; do
  test=tests/supervise/slurm_node_failure.sh run_name=node$fault
  [[ $fault == batchhost ]] && test=tests/supervise/slurm_batch_host.sh run_name=batchhost
  for ((i = 1; i <= REPEAT; i++)); do
    log=$(mktemp)
    say "$fault $i of $REPEAT"
    if ! TRAINRT_NODE_FAULT=$fault bash "$test" >"$log" 2>&1; then
      tail -20 "$log" >&2
      say "$fault $i failed (log above)"
      printf '{"bench":"node_failure","fault":"%s","failed":true}\n' "$fault" >>"$OUT"
      rm -f "$log"
      continue
    fi
    tmp=$(sed -n 's/^\[[^]]*\] kept //p' "$log" | tail -1)
    $PY - "$log" "$tmp/runs/$run_name" "$fault" >>"$OUT" <<'PY'
import json, os, re, sys
log, run, fault = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(log).read()
m = re.search(r"training again on \S+ after ([0-9.]+) s \(SlurmdTimeout ([0-9]+) s, peer_timeout ([0-9]+) s\)", text)
fault_at = float(re.search(r"fault at ([0-9.]+)", text).group(1))
state = re.search(r"Slurm calls node[0-9] '([^']*)'", text).group(1)
rows = [json.loads(l) for l in open(f"{run}/result.jsonl")]
if os.path.exists(f"{run}/result.superseded.jsonl"):
    rows += [json.loads(l) for l in open(f"{run}/result.superseded.jsonl")]
for r in rows:  # an epoch's last row has no step: the test's 6000 samples in batches of 240
    r.setdefault("step", r["epoch"] * 25)
before = sorted((r for r in rows if r["_timestamp"] < fault_at), key=lambda r: r["_timestamp"])
events = [json.loads(l) for l in open(f"{run}/events.jsonl")]
restored = [e["iteration"] for e in events if e.get("event") == "restore"][-1]
restored_step = next(r["step"] for r in rows if r["_training_iteration"] == restored)
a, b = before[-2], before[-1]
rate = (b["step"] - a["step"]) / (b["_timestamp"] - a["_timestamp"])
at_fault = b["step"] + rate * (fault_at - b["_timestamp"])
print(json.dumps({"bench": "node_failure", "fault": fault, "again_s": float(m.group(1)),
                  "slurmd_timeout_s": int(m.group(2)), "peer_timeout_s": int(m.group(3)),
                  "steps_lost": round(at_fault - restored_step, 1), "every_steps": 5, "slurm_state": state}))
PY
    tail -1 "$OUT" >&2
    rm -rf "$tmp" "$log"
  done
done
