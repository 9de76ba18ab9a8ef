#!/usr/bin/env python3
"""Renders bench/multinode/goodput_bench.sh's JSON object as BENCHMARKS.md's goodput section.

    goodput_report.py RESULTS.json NOTE      NOTE: where and when it ran
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: the reporting library
from reporting import cluster_section, targets  # noqa: E402

GOALS = targets("multinode")

PARTS = [("start_up", "start-up (process launch -> start record)"),
         ("restore", "restore"),
         ("checkpoint_stall", "checkpoint stall"),
         ("lost_work", "work lost to failures (redone)"),
         ("detection", "detection (last row -> failure record)"),
         ("relaunch", "relaunch (failure record -> next launch)"),
         ("stop", "stop margins (last row -> end of a stopped attempt)"),
         ("other", "other")]


def section(path, note):
    """The section's lines (NOTE: where and when it ran)."""
    r = json.load(open(path))
    g = r["goodput"]
    total = g["allocated_rank_s"]
    out = ["## Goodput: a compressed long job (3 nodes x 2 tasks, requeued, a node killed and one frozen)", ""]
    if note:
        out += [note, ""]
    out += [f"`make bench-goodput` (`bench/multinode/goodput_bench.sh`) on the local 3-node cluster: fashion_mlp on "
            f"the full FashionMNIST set through `jobs/fashion_mlp.sbatch` (`trainrt supervise`, `--no-kill`, "
            f"`--requeue`), {r['epochs']} epochs (about {r['minutes_wanted']} min of training, from a calibration), "
            f"Slurm time limit {r['time_limit_min']} min (trainrt stops and requeues the job before each), "
            f"`peer_timeout = {r['peer_timeout_s']:g}`, peer links {'on' if r.get('peer_links') else 'off'}. At 30 % of the training a node other "
            f"than the batch host is killed (every process, SIGKILL) and at 65 % one is frozen (SIGSTOP); each is "
            f"brought back once the relaunch runs without it. Goodput is `trainrt results`' own account "
            f"(docs/concepts.md, \"Results, metrics and progress\"): trained rank-time over the rank-time the attempts held; the time between "
            f"allocations (queued after a requeue) is not charged. Run: {r['when']}.", "",
            f"- training: {r['trained_s'] / 60:.1f} min; requeues: {r['requeues']}; "
            f"node killed: {'yes' if r['node_killed'] else 'no'}; node frozen: {'yes' if r['node_frozen'] else 'no'}; "
            f"queued between allocations: {g['between_allocations_s']:.0f} s (not charged)", "",
            "| | rank-s | share |", "|---|---|---|",
            f"| allocated (the attempts' spans x world size) | {total:.0f} | 100 % |",
            f"| **trained** | {g['useful_rank_s']:.0f} | **{100 * g['ratio']:.1f} %** |"]
    for key, label in PARTS:
        value = g["lost_rank_s"].get(key, 0)
        out.append(f"| {label} | {value:.0f} | {100 * value / total:.1f} % |")
    out += ["", "| recovery | detection (s) | relaunch (s) | start-up (s) | restore (s) | first row (s) | training again (s) |",
            "|---|---|---|---|---|---|---|"]
    for rec in r["recoveries"]:
        cells = [rec.get(k) for k in ("detection_s", "relaunch_s", "start_up_s", "restore_s", "first_iteration_s",
                                      "training_again_s")]
        out.append(f"| attempt {rec['attempt']} | " + " | ".join("–" if c is None else f"{c:.1f}" for c in cells) + " |")
    ok = (r["trained_s"] >= GOALS.GOODPUT_MIN_TRAINED_S and r["requeues"] >= GOALS.GOODPUT_MIN_REQUEUES
          and r["node_killed"] and r["node_frozen"])
    verdict = "PASS" if GOALS.GOODPUT.met(g["ratio"]) and ok else "MISS"
    out += ["", "*First row*: until the relaunched attempt's first result row, which fashion_mlp writes at the end of "
            "an epoch (about 4 s here), so it is mostly training.", "",
            f"- goodput ≥ {100 * GOALS.GOODPUT.goal:.0f} % over ≥ {GOALS.GOODPUT_MIN_TRAINED_S // 60} min of training "
            f"with ≥ {GOALS.GOODPUT_MIN_REQUEUES} requeues, a node killed and one frozen: "
            f"**{verdict}**, {100 * g['ratio']:.1f} %"]
    return out


def part(results):
    """The goodput section from this results directory's goodput.json (measured or stored)."""
    return cluster_section(results, "goodput.json", "goodput", section, "Goodput",
                           "BENCH_GOODPUT=1 or `make bench-goodput` runs it (root, the local cluster)")


if __name__ == "__main__":
    print("\n".join(section(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "")))
