#!/usr/bin/env python3
"""Renders bench/tune/job_array_bench.sh's JSON object as BENCHMARKS.md's job-array section.

    array_report.py RESULTS.json NOTE      NOTE: where and when it ran
"""
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: the reporting library
from reporting import cluster_section  # noqa: E402


def section(path, note):
    """The section's lines (NOTE: where and when it ran)."""
    r = json.load(open(path))
    out = [f"## Sweeps: `trainrt tune` in one allocation vs a Slurm job array ({r['trials']} trials)", ""]
    if note:
        out += [note, ""]
    out += [f"`make bench-tune-array` (`bench/tune/job_array_bench.sh`) on the local 3-node cluster: {r['trials']} "
            f"trials of fashion_mlp (full FashionMNIST, {r['epochs']} epochs, random search over `train.lr` and "
            f"`train.batch_size`, {r['ranks_per_trial']} ranks each, {r['at_once']} at once) as `trainrt tune` in one "
            f"allocation of 3 nodes x 2 tasks, and as a job array of {r['trials']} jobs of 1 node x 2 tasks, {r['at_once']} at "
            f"once (`--array=0-{r['trials'] - 1}%{r['at_once']}`), running the same values (`srun --mpi=pmix trainrt` in each), alternated; each timed from its submission to the last "
            f"trial's finish record. This cluster schedules at once and has no other users: on a shared one every "
            f"array job also waits in the queue, the sweep's trials never do. Run: {r['when']} ({r['cpu']}).", "",
            "| pair | tune: wall (s) | array: wall (s) | tune / array | tune: first trial (s) | array: first trial (s) "
            "| tune: trials' time (s) | array: trials' time (s) |",
            "|---|---|---|---|---|---|---|---|"]
    for i, p in enumerate(r["pairs"], 1):
        t, a = p["tune"], p["array"]
        out.append(f"| {i} | {t['wall_s']:.1f} | {a['wall_s']:.1f} | {p['ratio']:.2f}× | {t['first_start_s']:.1f} | "
                   f"{a['first_start_s']:.1f} | {t['busy_s']:.0f} | {a['busy_s']:.0f} |")
    ratio = statistics.median(p["ratio"] for p in r["pairs"])
    out += ["", "*Trials' time*: each trial's start record to its finish record, added up (MPI start-up, data "
            "loading, training, the last checkpoint).", "",
            f"- wall time to the last trial's end, `trainrt tune` / job array: **{ratio:.2f}×** (median of the pairs; "
            f"no target: issue 29 asks for the comparison side by side)"]
    if 0.9 <= ratio <= 1.1:
        out.append("- here the two take the same time within this machine's noise (the trials' own time moves by "
                   "about 10 % between runs on its 2 shared cores): an idle cluster starts an array job in under a "
                   "second. One allocation saves what this cluster cannot show: a queue wait per trial.")
    return out


def part(results):
    """The job-array section from this results directory's array_sweep.json (measured or stored)."""
    return cluster_section(results, "array_sweep.json", "array", section, "Sweeps vs a job array",
                           "BENCH_TUNE_ARRAY=1 or `make bench-tune-array` runs it (root, the local cluster)")


if __name__ == "__main__":
    print("\n".join(section(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "")))
