"""BENCHMARKS.md's section of the checkpoint bench on GlusterFS: the stored results of
`make bench-glusterfs` (bench/results/glusterfs/checkpoint/), whose ratios are computed as the
checkpoint topic's. No target of its own."""
import pandas as pd

from reporting import BENCH, Part, couples_ratio, fmt, jsonl, read_meta

SHOWN = "bench/results/glusterfs/checkpoint"  # as BENCHMARKS.md names it (from the repository root)
STORED = BENCH.parent / SHOWN


def part(results):
    gl = pd.concat([jsonl(STORED / f"checkpoint_n{n}.jsonl") for n in results.RANKS], ignore_index=True)
    if gl.empty or results.out.resolve() == STORED.resolve():  # none, or rendering those results themselves
        return Part()
    meta = read_meta(STORED / "machine.txt")
    lines = ["## Checkpoints on a network filesystem (GlusterFS, stored results)", "",
             f"Not measured by `make bench`: the stored results of `make bench-glusterfs` ({SHOWN}, "
             f"{meta.get('date', '?')}, trainrt {meta.get('trainrt', '?')}; full report {SHOWN}.md). "
             f"{meta.get('filesystem', '')}. The same checkpoint bench, both sides of each ratio through the "
             "volume, the same pairing of repetitions; FUSE's own costs on this machine, not a cluster's network.", "",
             "| ranks | what | file_per_rank / plain | shared / plain |", "|---:|---|---:|---:|"]
    for n in results.RANKS:
        for what in ("write", "read"):
            lines.append(f"| {n} | {what} | {fmt(couples_ratio(gl, n, what, 'file_per_rank'))} | "
                         f"{fmt(couples_ratio(gl, n, what, 'shared'))} |")
    return Part(lines + [""])
