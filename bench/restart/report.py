"""BENCHMARKS.md's stop-and-restart section from restart_n2.jsonl and restart_n4.jsonl
(restart_bench.sh): signal to exit, and a resumed run's start to its first step."""
import pandas as pd

from reporting import Part, fmt, targets

GOALS = targets("restart")
RANKS = (2, 4)


def part(results):
    rs = pd.concat([results.jsonl(f"restart_n{n}.jsonl") for n in RANKS], ignore_index=True)
    lines = ["## Stop and restart (fashion_mlp under mpiexec, 2.7 MB checkpoint)", ""]
    if rs.empty:
        return Part(lines + ["not run", ""], [GOALS.RESTART_LATENCY.row("–", None)])
    lines += ["Medians of 3 repetitions. Stop: USR2 to the last rank; *signal → exit* is measured from outside "
              "(kill to mpiexec's exit: stop agreed at the next step, checkpoint committed, stop recorded, MPI "
              "finalized); *request → commit* is the stop event's own figure. Restart latency: process start "
              "(from /proc) to the first resumed training step, less the time spent verifying and reading the "
              "checkpoint; the baseline is the same job's fresh start (no checkpoint) to its first step.", "",
              "| ranks | signal → exit (s) | request → commit (s) | first resumed step (s) | checkpoint verify+read (s) "
              "| restart latency (s) | fresh start → first step (s) | restart latency / fresh start |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    med = rs.groupby("ranks").median(numeric_only=True)
    for n, r in med.iterrows():
        lines.append(f"| {n} | {fmt(r['stop_to_exit_s'])} | {fmt(r['request_to_commit_s'])} | {fmt(r['first_resumed_step_s'])} | "
                     f"{fmt(r['checkpoint_read_s'])} | {fmt(r['restart_latency_s'])} | {fmt(r['fresh_first_step_s'])} | "
                     f"{fmt(r['restart_latency_s'] / r['fresh_first_step_s'])} |")
    detail = ", ".join(f"{n} ranks: {fmt(r['restart_latency_s'])} s" for n, r in med.iterrows())
    ok = all(GOALS.RESTART_LATENCY.met(v) is True for v in med["restart_latency_s"])
    return Part(lines + [""], [GOALS.RESTART_LATENCY.row(detail, ok)])
