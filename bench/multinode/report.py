#!/usr/bin/env python3
"""Renders bench/multinode/node_failure_bench.sh's JSON lines as BENCHMARKS.md's node-failure section.

    report.py RESULTS.jsonl NOTE      NOTE: where and when it ran
"""
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: the reporting library
from reporting import cluster_section, records, targets as declared  # noqa: E402

GOALS = declared("multinode")


def section(path, note):
    """The section's lines (NOTE: where and when it ran)."""
    rows = records(path)
    out = ["## Node failure: fault -> training again on the nodes left (3 nodes x 2 tasks)", ""]
    if note:
        out += [note, ""]
    out += ["Each repetition: `tests/supervise/slurm_node_failure.sh` on the local 3-node cluster in "
            "network namespaces (`SlurmdTimeout=300`, real clusters' default; `KillWait=5`), an sbatch job with "
            "`--no-kill` through `trainrt supervise`, a checkpoint every 5 steps, `[failure] peer_timeout = 10`, `peer_links = true`. "
            "`freeze`: every process of node2 stopped (a hung node: only trainrt's heartbeats notice); "
            "`kill`: every process of node2 killed (its trainrt process's peer links close without a goodbye: "
            "its neighbours end the step at once, and the supervisor, finding node2's slurmd gone, relaunches "
            "without waiting for srun, which waits `KillWait` for node2's tasks); `batchhost`: the "
            "batch host (node1: the batch script, `trainrt supervise`, the job's srun) powered off (its link cut, "
            "then every process killed; before 2026-11-25 only killed, which let srun's helper cancel the watcher "
            "step in some runs), "
            "`tests/supervise/slurm_batch_host.sh`: the watcher step on another node takes the job over after "
            "`peer_timeout` of silence. `trainrt results RUN` shows each recovery by phase. "
            "*Training again*: from the fault to the relaunched attempt's start on the 2 nodes left (4 ranks, "
            "from the last checkpoint). "
            "*Steps lost*: the failed attempt's steps past that checkpoint (from the step rate before the "
            "fault; the test injects the fault just after checkpoint 4's commit is recorded, so this is near the "
            "least a failure costs: a fault at a random moment loses half of `checkpoint.every_steps` on average, "
            "at worst all of them plus those of a checkpoint still being written, as a result row is written "
            "before its checkpoint). *Slurm*: its own reaction time is `SlurmdTimeout`; the node's state at the relaunch "
            "shows whether Slurm had noticed. A failed repetition is one where the job did not complete on the "
            "nodes left (see the closing note of the run that stored it).", "",
            "| fault | runs | training again, median (s) | min–max (s) | vs SlurmdTimeout | steps lost, median | Slurm's node state at the relaunch |",
            "|---|---|---|---|---|---|---|"]
    for fault in ("freeze", "kill", "batchhost"):
        tried = [r for r in rows if r["fault"] == fault]
        mine = [r for r in tried if not r.get("failed")]
        failed = len(tried) - len(mine)
        if not mine:
            out.append(f"| {fault} | {failed} failed | not run | | | | |" if failed else f"| {fault} | 0 | not run | | | | |")
            continue
        again = [r["again_s"] for r in mine]
        median = statistics.median(again)
        timeout = mine[0]["slurmd_timeout_s"]
        states = ", ".join(sorted({r["slurm_state"] for r in mine}))
        runs = f"{len(mine)}" + (f" (+{failed} failed)" if failed else "")
        out.append(f"| {fault} | {runs} | {median:.1f} | {min(again):.1f}–{max(again):.1f} | "
                   f"{median / timeout:.2f}× of {timeout} s | {statistics.median(r['steps_lost'] for r in mine):.0f} "
                   f"(a checkpoint every {mine[0]['every_steps']}) | {states} |")
    out += [""] + targets(rows)
    return out


def targets(rows):
    """The recovery goals (multinode/targets.py): kill and freeze -> training again."""
    lines = []
    kill, freeze = GOALS.KILL_AGAIN, GOALS.FREEZE_AGAIN_BEYOND_TIMEOUT
    for fault, limit_of, wanted in (("kill", lambda r: kill.goal, f"≤ {kill.shown} s"),
                                    ("freeze", lambda r: r["peer_timeout_s"] + freeze.goal,
                                     f"≤ peer_timeout + {freeze.shown} s")):
        mine = [r for r in rows if r["fault"] == fault and not r.get("failed")]
        if not mine:
            lines.append(f"- {fault} → training again {wanted}: not measured")
            continue
        median, limit = statistics.median(r["again_s"] for r in mine), limit_of(mine[0])
        verdict = "PASS" if median <= limit else "MISS"
        lines.append(f"- {fault} → training again {wanted} ({limit:g} s): **{verdict}**, median {median:.1f} s")
    return lines


def part(results):
    """The node-failure section from this results directory's node_failure.jsonl (measured or stored)."""
    return cluster_section(results, "node_failure.jsonl", "nodes", section, "Node failure",
                           "BENCH_NODES=1 runs it (root, the local cluster)")


if __name__ == "__main__":
    print("\n".join(section(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "")))
